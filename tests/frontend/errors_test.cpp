// Bad input gives one clear UserError line naming the file (and node or tensor), never a crash.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "frontend/onnx_export.h"
#include "frontend/onnx_import.h"
#include "ir/error.h"
#include "test_util.h"

namespace onnxc::frontend {
namespace {

using test::TempDir;
using test::user_error_of;
using ::testing::HasSubstr;

std::string load_error(const std::string& path) {
  return user_error_of([&] { load_model(path); });
}

// x -> Relu -> y, a minimal valid model.
onnx::ModelProto relu_model() {
  auto m = test::new_model();
  auto* g = m.mutable_graph();
  *g->add_input() = test::tensor_info("x", onnx::TensorProto::FLOAT, {"2"});
  *g->add_output() = test::tensor_info("y", onnx::TensorProto::FLOAT, {"2"});
  test::add_node(g, "Relu", {"x"}, {"y"}, "relu");
  return m;
}

TEST(FrontendErrors, MissingFile) {
  std::string e = load_error("/nonexistent/dir/model.onnx");
  EXPECT_THAT(e, HasSubstr("/nonexistent/dir/model.onnx"));
  EXPECT_THAT(e, HasSubstr("cannot open"));
  EXPECT_THAT(e, HasSubstr("No such file"));
}

TEST(FrontendErrors, Directory) {
  TempDir d;
  std::string e = load_error(d.path());
  EXPECT_THAT(e, HasSubstr(d.path()));
  EXPECT_THAT(e, HasSubstr("is a directory"));
}

TEST(FrontendErrors, EmptyFile) {
  TempDir d;
  test::write_bytes(d.file("empty.onnx"), "");
  std::string e = load_error(d.file("empty.onnx"));
  EXPECT_THAT(e, HasSubstr("empty.onnx"));
  EXPECT_THAT(e, HasSubstr("is empty"));
}

TEST(FrontendErrors, TruncatedModel) {
  TempDir d;
  std::string bytes = test::read_bytes(test::source_dir() + "/tests/models/encoder_layer/model.onnx");
  test::write_bytes(d.file("cut.onnx"), bytes.substr(0, bytes.size() / 2));
  std::string e = load_error(d.file("cut.onnx"));
  EXPECT_THAT(e, HasSubstr("cut.onnx"));
  EXPECT_THAT(e, HasSubstr("truncated"));
}

TEST(FrontendErrors, TextFile) {
  TempDir d;
  test::write_bytes(d.file("notes.onnx"), "This is not a model.\nJust some notes.\n");
  std::string e = load_error(d.file("notes.onnx"));
  EXPECT_THAT(e, HasSubstr("notes.onnx"));
  EXPECT_THAT(e, HasSubstr("is not an ONNX model"));
  EXPECT_THAT(e, HasSubstr("text file"));
}

TEST(FrontendErrors, PngFile) {
  TempDir d;
  std::string png("\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10\x08\x06\0\0\0\x1f\xf3\xff" "a", 33);
  test::write_bytes(d.file("image.onnx"), png);
  std::string e = load_error(d.file("image.onnx"));
  EXPECT_THAT(e, HasSubstr("image.onnx"));
  EXPECT_THAT(e, HasSubstr("is not an ONNX model"));
  EXPECT_THAT(e, HasSubstr("PNG"));
}

TEST(FrontendErrors, ProtobufWithoutGraph) {
  TempDir d;
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("nothing");
  test::write_model(m, d.file("nograph.onnx"));
  std::string e = load_error(d.file("nograph.onnx"));
  EXPECT_THAT(e, HasSubstr("nograph.onnx"));
  EXPECT_THAT(e, HasSubstr("no 'graph'"));
}

TEST(FrontendErrors, TooLargeForOneProtobuf) {
  TempDir d;
  std::string path = d.file("huge.onnx");
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, (int64_t{1} << 31) + 4096), 0);  // sparse: takes no disk space
  ::close(fd);
  std::string e = load_error(path);
  EXPECT_THAT(e, HasSubstr("huge.onnx"));
  EXPECT_THAT(e, HasSubstr("2 GiB"));
  EXPECT_THAT(e, HasSubstr("external data"));
}

TEST(FrontendErrors, Cycle) {
  TempDir d;
  auto m = relu_model();
  auto* g = m.mutable_graph();
  g->mutable_node(0)->set_input(0, "b");
  test::add_node(g, "Neg", {"y"}, {"a"}, "neg");
  test::add_node(g, "Abs", {"a"}, {"b"}, "abs");
  test::write_model(m, d.file("cycle.onnx"));
  std::string e = load_error(d.file("cycle.onnx"));
  EXPECT_THAT(e, HasSubstr("cycle.onnx"));
  EXPECT_THAT(e, HasSubstr("cycle"));
  EXPECT_THAT(e, HasSubstr("node '"));
}

TEST(FrontendErrors, DanglingInput) {
  TempDir d;
  auto m = relu_model();
  test::add_node(m.mutable_graph(), "Add", {"y", "ghost"}, {"z"}, "adder");
  test::write_model(m, d.file("dangling.onnx"));
  std::string e = load_error(d.file("dangling.onnx"));
  EXPECT_THAT(e, HasSubstr("dangling.onnx"));
  EXPECT_THAT(e, HasSubstr("Add node 'adder'"));
  EXPECT_THAT(e, HasSubstr("'ghost'"));
  EXPECT_THAT(e, HasSubstr("dangling input"));
}

TEST(FrontendErrors, DuplicateValueName) {
  TempDir d;
  auto m = relu_model();
  test::add_node(m.mutable_graph(), "Neg", {"x"}, {"y"}, "neg");
  test::write_model(m, d.file("dup.onnx"));
  std::string e = load_error(d.file("dup.onnx"));
  EXPECT_THAT(e, HasSubstr("dup.onnx"));
  EXPECT_THAT(e, HasSubstr("'y' is defined twice"));
  EXPECT_THAT(e, HasSubstr("Relu node 'relu'"));
  EXPECT_THAT(e, HasSubstr("Neg node 'neg'"));
}

TEST(FrontendErrors, DuplicateInitializerAndNodeOutput) {
  TempDir d;
  auto m = relu_model();
  *m.mutable_graph()->add_initializer() = test::float_tensor("y", {1}, {1.f});
  test::write_model(m, d.file("dup2.onnx"));
  std::string e = load_error(d.file("dup2.onnx"));
  EXPECT_THAT(e, HasSubstr("'y' is defined twice"));
  EXPECT_THAT(e, HasSubstr("an initializer"));
}

TEST(FrontendErrors, UndefinedGraphOutput) {
  TempDir d;
  auto m = relu_model();
  *m.mutable_graph()->add_output() = test::tensor_info("nowhere", onnx::TensorProto::FLOAT, {});
  test::write_model(m, d.file("out.onnx"));
  std::string e = load_error(d.file("out.onnx"));
  EXPECT_THAT(e, HasSubstr("out.onnx"));
  EXPECT_THAT(e, HasSubstr("output 'nowhere' is not defined"));
}

TEST(FrontendErrors, BadInitializerData) {
  TempDir d;
  auto m = relu_model();
  auto t = test::float_tensor("w", {2, 3}, {1, 2, 3});
  *m.mutable_graph()->add_initializer() = t;
  test::write_model(m, d.file("short.onnx"));
  std::string e = load_error(d.file("short.onnx"));
  EXPECT_THAT(e, HasSubstr("short.onnx"));
  EXPECT_THAT(e, HasSubstr("initializer 'w'"));
  EXPECT_THAT(e, HasSubstr("float_data holds 3 values, but its dims need 6"));
}

TEST(FrontendErrors, AbsurdDimsFailBeforeAllocating) {
  TempDir d;
  auto m = relu_model();
  onnx::TensorProto t;
  t.set_name("w");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(int64_t{1} << 40);
  t.add_dims(int64_t{1} << 30);
  *m.mutable_graph()->add_initializer() = t;
  test::write_model(m, d.file("absurd.onnx"));
  EXPECT_THAT(load_error(d.file("absurd.onnx")), HasSubstr("more than 2^62"));
}

TEST(FrontendErrors, NegativeDim) {
  TempDir d;
  auto m = relu_model();
  auto t = test::float_tensor("w", {-2}, {});
  *m.mutable_graph()->add_initializer() = t;
  test::write_model(m, d.file("neg.onnx"));
  EXPECT_THAT(load_error(d.file("neg.onnx")), HasSubstr("negative dimension -2"));
}

// Every prefix of a real model either loads (a cut at a field boundary is a valid smaller
// message) or fails with a UserError: no crash, no other exception.
TEST(FrontendErrors, TruncationSweep) {
  TempDir d;
  std::string bytes = test::read_bytes(test::source_dir() + "/tests/models/encoder_layer/model.onnx");
  std::vector<size_t> cuts;
  for (size_t n = 0; n <= 64; ++n) cuts.push_back(n);
  for (size_t i = 1; i < 200; ++i) cuts.push_back(bytes.size() * i / 200);
  int loaded = 0, rejected = 0;
  std::string path = d.file("prefix.onnx");
  for (size_t n : cuts) {
    test::write_bytes(path, bytes.substr(0, n));
    std::string e = user_error_of([&] {
      ir::Model m = load_model(path);
      export_model(m);  // what loads must also be writable
      ++loaded;
    });
    if (!e.empty()) {
      ++rejected;
      EXPECT_THAT(e, HasSubstr("prefix.onnx")) << "prefix " << n;
    }
  }
  EXPECT_EQ(loaded + rejected, static_cast<int>(cuts.size()));
  EXPECT_GT(rejected, 200);
  std::cout << "truncation sweep: " << cuts.size() << " prefixes, " << loaded << " loaded, " << rejected
            << " rejected\n";
}

// Corrupting single bytes of a real model must never crash either.
TEST(FrontendErrors, ByteFlipSweep) {
  TempDir d;
  std::string bytes = test::read_bytes(test::source_dir() + "/tests/models/encoder_layer/model.onnx");
  std::string path = d.file("flipped.onnx");
  uint64_t seed = 12345;
  int loaded = 0, rejected = 0;
  for (int i = 0; i < 300; ++i) {
    std::string b = bytes;
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    size_t at = (seed >> 16) % b.size();
    b[at] = static_cast<char>(b[at] ^ static_cast<char>(1 + (seed >> 8) % 255));
    test::write_bytes(path, b);
    std::string e = user_error_of([&] {
      ir::Model m = load_model(path);
      export_model(m);
    });
    (e.empty() ? loaded : rejected)++;
  }
  std::cout << "byte-flip sweep: " << loaded << " loaded, " << rejected << " rejected\n";
}

}  // namespace
}  // namespace onnxc::frontend
