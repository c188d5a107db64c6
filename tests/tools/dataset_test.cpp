// Test-data folders: numeric ordering, folder forms, model-folder discovery.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ir/error.h"
#include "tools/check/dataset.h"

namespace fs = std::filesystem;

namespace onnxc::check {
namespace {

// A tree per test: ctest runs the tests of this file in parallel processes.
std::string make_tree() {
  fs::path root = fs::path(::testing::TempDir()) /
                  ("dataset_tree_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  fs::remove_all(root);
  for (const char* d : {"m1/test_data_set_0", "m1/test_data_set_2", "m1/test_data_set_10", "group/m2/test_data_set_0",
                        "not_a_test/test_data_set_0", "empty"}) {
    fs::create_directories(root / d);
  }
  std::ofstream(root / "m1/model.onnx") << "x";
  std::ofstream(root / "group/m2/model.onnx") << "x";
  for (const char* f : {"input_0.pb", "input_1.pb", "input_10.pb", "input_2.pb", "output_0.pb", "input_x.pb"}) {
    std::ofstream(root / "m1/test_data_set_0" / f) << "x";
  }
  return root.string();
}

TEST(DataSet, NumberedFilesSortNumerically) {
  std::string root = make_tree();
  std::vector<std::string> f = numbered_files(root + "/m1/test_data_set_0", "input_");
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(fs::path(f[2]).filename(), "input_2.pb");
  EXPECT_EQ(fs::path(f[3]).filename(), "input_10.pb");
}

TEST(DataSet, FindsDataSetsFromEitherFolder) {
  std::string root = make_tree();
  std::vector<std::string> sets = find_data_sets(root + "/m1");
  ASSERT_EQ(sets.size(), 3u);
  EXPECT_EQ(fs::path(sets[1]).filename(), "test_data_set_2");
  EXPECT_EQ(fs::path(sets[2]).filename(), "test_data_set_10");
  EXPECT_EQ(find_data_sets(root + "/m1/test_data_set_0").size(), 1u);
  EXPECT_THROW(find_data_sets(root + "/empty"), UserError);
  EXPECT_THROW(find_data_sets(root + "/missing"), UserError);
  EXPECT_THROW(find_data_sets(root + "/m1/model.onnx"), UserError);
}

TEST(DataSet, FindsModelTestFolders) {
  std::string root = make_tree();
  std::vector<std::string> dirs = find_model_test_dirs(root);
  ASSERT_EQ(dirs.size(), 2u);
  EXPECT_EQ(fs::relative(dirs[0], root), "group/m2");
  EXPECT_EQ(fs::relative(dirs[1], root), "m1");
  EXPECT_EQ(find_model_test_dirs(root + "/m1").size(), 1u);
}

}  // namespace
}  // namespace onnxc::check

namespace onnxc::check {
namespace {

TEST(DataSet, Bfloat16StoredAsUint16IsReinterpreted) {
  ir::Tensor u = ir::Tensor::from_vector<uint16_t>(ir::DType::UInt16, {2}, {0x3f80, 0xc000});  // 1.0, -2.0
  ir::Tensor b = match_stored_dtype(u, ir::DType::BFloat16);
  EXPECT_EQ(b.dtype(), ir::DType::BFloat16);
  EXPECT_EQ(b.get_f64(0), 1.0);
  EXPECT_EQ(b.get_f64(1), -2.0);
  EXPECT_EQ(match_stored_dtype(u, ir::DType::Float32).dtype(), ir::DType::UInt16);  // nothing else changes
}

}  // namespace
}  // namespace onnxc::check
