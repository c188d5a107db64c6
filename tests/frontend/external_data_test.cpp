// External data: tensors read in place from a mapped file beside the model; every way the
// reference can be wrong is a UserError naming the model, the tensor and the data file.
#include <fcntl.h>
#include <sys/stat.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

#include "frontend/onnx_export.h"
#include "frontend/onnx_import.h"
#include "ir/error.h"
#include "ir/printer.h"
#include "test_util.h"

namespace onnxc::frontend {
namespace {

using test::TempDir;
using ::testing::HasSubstr;

struct Ref {
  std::string name, location;
  std::vector<int64_t> dims;
  int64_t offset = -1, length = -1;  // -1: key left out
};

// A model whose output is the sum of the external initializers (all f32).
onnx::ModelProto model_with(const std::vector<Ref>& refs) {
  auto m = test::new_model();
  auto* g = m.mutable_graph();
  std::string acc;
  for (const Ref& r : refs) {
    auto* t = g->add_initializer();
    t->set_name(r.name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : r.dims) t->add_dims(d);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto kv = [&](const char* k, const std::string& v) {
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    kv("location", r.location);
    if (r.offset >= 0) kv("offset", std::to_string(r.offset));
    if (r.length >= 0) kv("length", std::to_string(r.length));
    if (acc.empty()) {
      acc = r.name;
    } else {
      test::add_node(g, "Add", {acc, r.name}, {acc + "+" + r.name});
      acc += "+" + r.name;
    }
  }
  *g->add_output() = test::tensor_info(acc, onnx::TensorProto::FLOAT, {});
  return m;
}

std::string floats(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

const ir::Tensor& init(const ir::Model& m, const std::string& name) {
  return m.graph->find_value(name)->constant();
}

TEST(FrontendExternalData, OffsetsAndLengths) {
  TempDir d;
  // a: 4 floats at 0; b: 2 floats at 64 with an explicit length; c: 1 float at an odd offset.
  std::string data = floats({1, 2, 3, 4}) + std::string(48, '\0') + floats({5, 6}) + std::string(3, '\0') + floats({7});
  test::write_bytes(d.file("weights.bin"), data);
  test::write_model(model_with({{"a", "weights.bin", {4}}, {"b", "weights.bin", {2}, 64, 8},
                                {"c", "weights.bin", {1}, 75}}),
                    d.file("model.onnx"));
  ir::Model m = load_model(d.file("model.onnx"));
  EXPECT_EQ(init(m, "a").get_f64(3), 4.0);
  EXPECT_EQ(init(m, "b").get_f64(0), 5.0);
  EXPECT_EQ(init(m, "b").get_f64(1), 6.0);
  EXPECT_EQ(init(m, "c").get_f64(0), 7.0);
  // a and b are views into one mapping, not copies.
  EXPECT_EQ(static_cast<const char*>(init(m, "b").raw()) - static_cast<const char*>(init(m, "a").raw()), 64);
}

TEST(FrontendExternalData, SubfolderLocation) {
  TempDir d;
  ASSERT_EQ(::mkdir(d.file("data").c_str(), 0755), 0);
  test::write_bytes(d.file("data/w.bin"), floats({9, 8}));
  test::write_model(model_with({{"w", "data/w.bin", {2}}}), d.file("model.onnx"));
  EXPECT_EQ(init(load_model(d.file("model.onnx")), "w").get_f64(1), 8.0);
}

TEST(FrontendExternalData, Errors) {
  TempDir d;
  test::write_bytes(d.file("w.bin"), floats({1, 2, 3, 4}));
  auto error_of = [&](const Ref& r) {
    test::write_model(model_with({r}), d.file("model.onnx"));
    return test::user_error_of([&] { load_model(d.file("model.onnx")); });
  };
  std::string e = error_of({"w", "missing.bin", {4}});
  EXPECT_THAT(e, HasSubstr("model.onnx"));
  EXPECT_THAT(e, HasSubstr("external data of initializer 'w'"));
  EXPECT_THAT(e, HasSubstr("missing.bin"));
  EXPECT_THAT(e, HasSubstr("No such file"));

  e = error_of({"w", "w.bin", {4}, 8});
  EXPECT_THAT(e, HasSubstr("external data of initializer 'w'"));
  EXPECT_THAT(e, HasSubstr("bytes 8..24 lie beyond the end of 'w.bin' (16 bytes)"));

  EXPECT_THAT(error_of({"w", "w.bin", {8}}), HasSubstr("beyond the end"));
  EXPECT_THAT(error_of({"w", "w.bin", {4}, 0, 12}), HasSubstr("length 12 does not match the 16 bytes"));
  EXPECT_THAT(error_of({"w", d.file("w.bin"), {4}}), HasSubstr("is an absolute path"));
  EXPECT_THAT(error_of({"w", "../w.bin", {4}}), HasSubstr("leaves the model's folder"));
  EXPECT_THAT(error_of({"w", "sub/../../w.bin", {4}}), HasSubstr("leaves the model's folder"));
  EXPECT_THAT(error_of({"w", "", {4}}), HasSubstr("has no 'location'"));
  EXPECT_THAT(error_of({"w", ".", {4}}), HasSubstr("not a regular file"));
}

// What decides is the file really there, not the text of its location: a symbolic link (to a file
// or a folder) inside the model's folder must not lead out of it, and a FIFO must not block.
TEST(FrontendExternalData, SymlinksFifosAndDevicesAreRefused) {
  TempDir outside, d;
  test::write_bytes(outside.file("secret.bin"), floats({1, 2, 3, 4}));
  ASSERT_EQ(::symlink(outside.file("secret.bin").c_str(), d.file("link.bin").c_str()), 0);
  ASSERT_EQ(::symlink(outside.path().c_str(), d.file("linkdir").c_str()), 0);
  ASSERT_EQ(::mkfifo(d.file("fifo.bin").c_str(), 0600), 0);
  ASSERT_EQ(::symlink("/dev/zero", d.file("zero.bin").c_str()), 0);
  auto error_of = [&](const Ref& r) {
    test::write_model(model_with({r}), d.file("model.onnx"));
    return test::user_error_of([&] { load_model(d.file("model.onnx")); });
  };
  std::string e = error_of({"w", "link.bin", {4}});
  EXPECT_THAT(e, HasSubstr("model.onnx: external data of initializer 'w': location 'link.bin' is a symbolic link"));
  EXPECT_THAT(error_of({"w", "linkdir/secret.bin", {4}}),
              HasSubstr("location 'linkdir/secret.bin' passes through 'linkdir', which is a symbolic link"));
  EXPECT_THAT(error_of({"w", "fifo.bin", {4}}), HasSubstr("location 'fifo.bin' is a FIFO, not a regular file"));
  EXPECT_THAT(error_of({"w", "zero.bin", {4}}), HasSubstr("is a symbolic link"));
  EXPECT_THAT(error_of({"w", "/dev/zero", {4}}), HasSubstr("is an absolute path"));

  // --allow-external-path: links and absolute paths that resolve inside the named folder are read.
  ImportOptions opt;
  opt.allow_external_paths = {outside.path()};
  test::write_model(model_with({{"w", "linkdir/secret.bin", {4}}}), d.file("model.onnx"));
  EXPECT_EQ(init(load_model(d.file("model.onnx"), opt), "w").get_f64(3), 4.0);
  test::write_model(model_with({{"w", outside.file("secret.bin"), {4}}}), d.file("model.onnx"));
  EXPECT_EQ(init(load_model(d.file("model.onnx"), opt), "w").get_f64(0), 1.0);
  // ... but nothing that resolves elsewhere, and never a non-regular file.
  test::write_model(model_with({{"w", "zero.bin", {4}}}), d.file("model.onnx"));
  e = test::user_error_of([&] { load_model(d.file("model.onnx"), opt); });
  EXPECT_THAT(e, HasSubstr("does not resolve into an --allow-external-path folder"));
  opt.allow_external_paths = {"/dev"};
  e = test::user_error_of([&] { load_model(d.file("model.onnx"), opt); });
  EXPECT_THAT(e, HasSubstr("is a character device, not a regular file"));
}

TEST(FrontendExternalData, NotLoaded) {
  TempDir d;
  test::write_model(model_with({{"w", "absent.bin", {4}}}), d.file("model.onnx"));
  ImportOptions opt;
  opt.load_external_data = false;
  ir::Model m = load_model(d.file("model.onnx"), opt);
  EXPECT_TRUE(init(m, "w").empty_data());
  EXPECT_EQ(init(m, "w").dims(), std::vector<int64_t>{4});
  EXPECT_THAT(ir::to_string(m), HasSubstr("<no data>"));
  EXPECT_THAT(test::user_error_of([&] { export_model(m); }), HasSubstr("has no data to write"));
}

TEST(FrontendExternalData, SaveWithExternalData) {
  TempDir d;
  ir::Model m;
  m.opset_imports.push_back({"", 17});
  ir::Tensor big = ir::Tensor::from_vector<float>(ir::DType::Float32, {300}, std::vector<float>(300, 0.5f));
  ir::Tensor small = ir::Tensor::from_vector<float>(ir::DType::Float32, {2}, {1, 2});
  ir::Value* a = m.graph->add_initializer("big", big);
  ir::Value* b = m.graph->add_initializer("small", small);
  ir::Node* n = m.graph->add_node("Add", {a, b}, {"sum"});
  m.graph->add_output(n->output());
  ExportOptions opt;
  opt.external_data = true;
  save_model(m, d.file("out.onnx"), opt);
  EXPECT_EQ(d.list(), (std::vector<std::string>{"out.onnx", "out.onnx.data"}));
  ImportOptions plain;
  plain.onnx_shape_inference = false;  // compare with `m` as built, without inferred types
  ir::Model back = load_model(d.file("out.onnx"), plain);
  EXPECT_EQ(ir::to_string(back), ir::to_string(m));
  EXPECT_TRUE(init(back, "big").same_contents(big));
  // Saving over the same path again while `back` still maps the old data file works.
  save_model(back, d.file("out.onnx"), opt);
  EXPECT_EQ(ir::to_string(load_model(d.file("out.onnx"), plain)), ir::to_string(m));
}

// A 2.5 GiB weight in a (sparse) external file loads as a view without reading or copying it.
TEST(FrontendExternalData, LargerThanTwoGiB) {
  TempDir d;
  const int64_t n = (int64_t{5} << 30) / 2 / 4;  // 2.5 GiB of floats
  std::string path = d.file("huge.bin");
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, n * 4), 0);
  float last = 42.f;
  ASSERT_EQ(::pwrite(fd, &last, 4, (n - 1) * 4), 4);
  ::close(fd);
  test::write_model(model_with({{"huge", "huge.bin", {n}}}), d.file("model.onnx"));
  ir::Model m = load_model(d.file("model.onnx"));
  const ir::Tensor& t = init(m, "huge");
  EXPECT_EQ(t.nbytes(), static_cast<size_t>(n) * 4);
  EXPECT_EQ(t.get_f64(n - 1), 42.0);
  EXPECT_EQ(t.get_f64(0), 0.0);
}

}  // namespace
}  // namespace onnxc::frontend
