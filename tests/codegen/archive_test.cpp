// The static library's container as onnxc writes it (codegen/emit/archive.h, elf_object.h): binutils
// read the members back byte for byte, and a C program links against the index, pulling the
// weights object by its symbol alone.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/emit/archive.h"
#include "codegen/emit/elf_object.h"
#include "codegen/emit/library.h"
#include "test_util.h"

namespace onnxc::test {
namespace {

namespace fs = std::filesystem;

std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

codegen::ArchiveMember bytes_member(const std::string& name, const std::string& bytes) {
  return {name, {}, bytes.size(), [bytes](std::ostream& o) { o << bytes; }};
}

TEST(Archive, BinutilsReadBackEveryMember) {
  std::string dir = temp_dir("archive");
  std::vector<codegen::ArchiveMember> members = {bytes_member("odd.txt", "abc"), bytes_member("even.txt", "wxyz"),
                                                 bytes_member("empty.txt", "")};
  std::string a = dir + "/t.a";
  codegen::write_archive(a, members);
  ASSERT_NO_THROW(codegen::run_command({"ar", "t", a}, dir + "/t.log"));
  EXPECT_EQ(read(dir + "/t.log"), "odd.txt\neven.txt\nempty.txt\n");
  for (const auto& m : members) {
    ASSERT_NO_THROW(codegen::run_command({"ar", "p", a, m.name}, dir + "/p.log"));
    std::ostringstream want;
    m.write(want);
    EXPECT_EQ(read(dir + "/p.log"), want.str()) << m.name;
  }
  fs::remove_all(dir);
}

TEST(Archive, ProgramLinksTheWeightsObjectThroughTheIndex) {
  // An odd-sized blob in two pieces with a gap: the member and the archive padding both matter.
  codegen::WeightsBlob blob;
  blob.pieces.push_back({0, ir::Tensor::from_vector<uint8_t>(ir::DType::UInt8, {3}, {7, 8, 9})});
  blob.pieces.push_back({64, ir::Tensor::from_vector<uint8_t>(ir::DType::UInt8, {1}, {42})});
  blob.size = 65;
  codegen::WeightsObject weights(blob, "onnxc_weights_t", uint64_t(1) << 30,
                                 codegen::toolchain_for(Halide::get_host_target()).elf_machine);
  std::ostringstream object;
  weights.write(object);
  ASSERT_EQ(object.str().size(), weights.size());
  EXPECT_EQ(codegen::elf_defined_globals(object.str()), std::vector<std::string>{"onnxc_weights_t"});

  std::string dir = temp_dir("archive_link");
  std::ofstream(dir + "/main.c") << R"(#include <stdio.h>
extern const unsigned char onnxc_weights_t[];
int main(void) { printf("%d %d %d %d\n", onnxc_weights_t[0], onnxc_weights_t[2], onnxc_weights_t[3], onnxc_weights_t[64]); return 0; }
)";
  std::string a = dir + "/libw.a";
  codegen::write_archive(a, {bytes_member("pad.txt", "x"),
                             {"weights.o", {"onnxc_weights_t"}, weights.size(), [&](std::ostream& o) { weights.write(o); }}});
  std::string exe = dir + "/main";
  ASSERT_NO_THROW(codegen::run_command({"cc", dir + "/main.c", a, "-o", exe}, dir + "/cc.log")) << read(dir + "/cc.log");
  ASSERT_NO_THROW(codegen::run_command({exe}, dir + "/run.log"));
  EXPECT_EQ(read(dir + "/run.log"), "7 9 0 42\n");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace onnxc::test
