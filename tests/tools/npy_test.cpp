// The .npy reader: v1 and v2 headers, dtypes, shapes, and clear errors for what it refuses.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "ir/error.h"
#include "tools/check/npy.h"

namespace onnxc::check {
namespace {

// Writes an .npy file: magic, version, header (padded to 64 bytes with a trailing newline), data.
std::string write_npy(const std::string& name, int major, const std::string& dict, const std::string& data) {
  std::string path = ::testing::TempDir() + "/" + name;
  size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((prefix + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY", 6);
  f.put(static_cast<char>(major));
  f.put(0);
  uint32_t len = static_cast<uint32_t>(header.size());
  f.write(reinterpret_cast<const char*>(&len), major == 1 ? 2 : 4);
  f << header << data;
  return path;
}

std::string bytes_of(const void* p, size_t n) { return std::string(static_cast<const char*>(p), n); }

TEST(Npy, ReadsFloat32V1) {
  float v[6] = {1, 2, 3, 4, 5, 6};
  std::string p = write_npy("f.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", bytes_of(v, 24));
  EXPECT_TRUE(is_npy_file(p));
  ir::Tensor t = load_npy(p);
  EXPECT_EQ(t.dtype(), ir::DType::Float32);
  EXPECT_EQ(t.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.data<float>()[5], 6);
}

TEST(Npy, ReadsInt64V2AndScalarsAndVectors) {
  int64_t v[3] = {7, -1, 9};
  ir::Tensor t = load_npy(write_npy("i.npy", 2, "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", bytes_of(v, 24)));
  EXPECT_EQ(t.dtype(), ir::DType::Int64);
  EXPECT_EQ(t.dims(), (std::vector<int64_t>{3}));
  EXPECT_EQ(t.data<int64_t>()[1], -1);
  double s = 2.5;
  ir::Tensor sc = load_npy(write_npy("s.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", bytes_of(&s, 8)));
  EXPECT_EQ(sc.rank(), 0);
  EXPECT_EQ(sc.data<double>()[0], 2.5);
  uint8_t b[2] = {1, 0};
  ir::Tensor bt = load_npy(write_npy("b.npy", 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (1, 2), }", bytes_of(b, 2)));
  EXPECT_EQ(bt.dtype(), ir::DType::Bool);
}

void expect_user_error(const std::string& path, const std::string& needle) {
  try {
    load_npy(path);
    FAIL() << "no error for " << path;
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(Npy, RefusesWhatItCannotRead) {
  float v[2] = {1, 2};
  expect_user_error(write_npy("be.npy", 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", bytes_of(v, 8)),
                    "big-endian");
  expect_user_error(write_npy("fo.npy", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", bytes_of(v, 8)),
                    "Fortran");
  expect_user_error(write_npy("u.npy", 1, "{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }", ""),
                    "unsupported .npy dtype");
  expect_user_error(write_npy("tr.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", bytes_of(v, 8)),
                    "truncated");
  std::string txt = ::testing::TempDir() + "/text.npy";
  std::ofstream(txt) << "hello";
  expect_user_error(txt, "not a .npy file");
  expect_user_error(::testing::TempDir() + "/missing.npy", "cannot open");
}

}  // namespace
}  // namespace onnxc::check
