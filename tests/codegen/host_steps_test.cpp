// Host steps end to end: a model with a data-dependent size (NonZero, Compress) compiled to a library
// and run through the runtime's C API at two input sizes, with Halide kernels after the host step that
// read the size it binds; and a string op (StringConcat) routed to its host step.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "onnxc/runtime.h"
#include "opened_library.h"
#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;

#ifdef HAVE_ONNXC_RUNTIME
// x[n] -> NonZero -> idx[1, nz] -> Cast(float) * 2 -> z[1, nz]; idx is an output too.
ir::Model nonzero_then_kernel() {
  ModelBuilder b(17);
  Dim n = Dim::symbol("n"), nz = Dim::symbol("nz");
  auto* x = b.input("x", DType::Float32, {n});
  auto* idx = b.op("NonZero", {x}, "idx", DType::Int64, {1, nz});
  auto* c = b.op("Cast", {idx}, "c", DType::Float32, {1, nz});
  c->producer()->set_attr_int("to", 1);
  auto* z = b.op("Mul", {c, b.const_f32("two", {}, {2})}, "z", DType::Float32, {1, nz});
  b.output(idx);
  b.output(z);
  return std::move(b.model());
}

struct Session : OpenedLibrary {
  using OpenedLibrary::OpenedLibrary;
  template <class T>
  std::vector<T> output(size_t i, std::vector<int64_t>* dims) {
    onnxc_tensor o;
    EXPECT_EQ(onnxc_session_get_output(s, i, &o), ONNXC_OK) << onnxc_session_last_error(s);
    dims->assign(o.dims, o.dims + o.rank);
    size_t numel = 1;
    for (int64_t d : *dims) numel *= static_cast<size_t>(d);
    return std::vector<T>(static_cast<const T*>(o.data), static_cast<const T*>(o.data) + numel);
  }
};

TEST(HostSteps, CompiledNonZeroRunsAtTwoSizes) {
  auto r = compile(nonzero_then_kernel(), "nonzero_kernel");
  Session m(r.so_path);
  ASSERT_NE(m.s, nullptr);
  struct Case {
    std::vector<float> x;
    std::vector<int64_t> idx;
  };
  for (const Case& c : {Case{{0, 3, 0, 0, 5}, {1, 4}}, Case{{1, 1, 0, 1, 0, 0, 2, 0, 9}, {0, 1, 3, 6, 8}}}) {
    int64_t n = static_cast<int64_t>(c.x.size());
    onnxc_tensor in{1, 1, &n, const_cast<float*>(c.x.data())};
    ASSERT_EQ(onnxc_session_set_input(m.s, 0, &in), ONNXC_OK) << onnxc_session_last_error(m.s);
    ASSERT_EQ(onnxc_session_run(m.s), ONNXC_OK) << onnxc_session_last_error(m.s);
    std::vector<int64_t> dims;
    int64_t nz = static_cast<int64_t>(c.idx.size());
    EXPECT_EQ(m.output<int64_t>(0, &dims), c.idx);
    EXPECT_EQ(dims, (std::vector<int64_t>{1, nz}));
    std::vector<float> twice;
    for (int64_t i : c.idx) twice.push_back(2.0f * static_cast<float>(i));
    EXPECT_EQ(m.output<float>(1, &dims), twice);
    EXPECT_EQ(dims, (std::vector<int64_t>{1, nz}));
  }
}

TEST(HostSteps, CompiledCompressAlongAnAxisFeedsAKernel) {
  ModelBuilder b(17);
  Dim n = Dim::symbol("n"), k = Dim::symbol("k");
  auto* x = b.input("x", DType::Float32, {n, 2});
  auto* cond = b.input("cond", DType::Bool, {n});
  auto* y = b.op("Compress", {x, cond}, "y", DType::Float32, {k, 2});
  y->producer()->set_attr_int("axis", 0);
  b.output(b.op("Neg", {y}, "z", DType::Float32, {k, 2}));
  auto r = compile(std::move(b.model()), "compress_kernel");
  Session m(r.so_path);
  ASSERT_NE(m.s, nullptr);
  std::vector<float> xv = {1, 2, 3, 4, 5, 6};
  std::vector<uint8_t> keep = {1, 0, 1};
  int64_t xd[] = {3, 2}, cd[] = {3};
  onnxc_tensor xt{1, 2, xd, xv.data()}, ct{9, 1, cd, keep.data()};
  ASSERT_EQ(onnxc_session_set_input(m.s, 0, &xt), ONNXC_OK) << onnxc_session_last_error(m.s);
  ASSERT_EQ(onnxc_session_set_input(m.s, 1, &ct), ONNXC_OK) << onnxc_session_last_error(m.s);
  ASSERT_EQ(onnxc_session_run(m.s), ONNXC_OK) << onnxc_session_last_error(m.s);
  std::vector<int64_t> dims;
  EXPECT_EQ(m.output<float>(0, &dims), (std::vector<float>{-1, -2, -5, -6}));
  EXPECT_EQ(dims, (std::vector<int64_t>{2, 2}));
}

// StringConcat (opset 20) routed to its host step: a[n] + b[1] -> y[n], b broadcast along a.
TEST(HostSteps, CompiledStringConcatBroadcasts) {
  ModelBuilder b(20);
  Dim n = Dim::symbol("n");
  auto* a = b.input("a", DType::String, {n});
  auto* suffix = b.input("b", DType::String, {1});
  b.output(b.op("StringConcat", {a, suffix}, "y", DType::String, {n}));
  auto r = compile(std::move(b.model()), "string_concat");
  Session m(r.so_path);
  ASSERT_NE(m.s, nullptr);
  std::vector<const char*> av = {"ab", "", "caf"}, bv = {"\xc3\xa9"};
  int64_t ad[] = {3}, bd[] = {1};
  onnxc_tensor at{8, 1, ad, av.data()}, bt{8, 1, bd, bv.data()};
  ASSERT_EQ(onnxc_session_set_input(m.s, 0, &at), ONNXC_OK) << onnxc_session_last_error(m.s);
  ASSERT_EQ(onnxc_session_set_input(m.s, 1, &bt), ONNXC_OK) << onnxc_session_last_error(m.s);
  ASSERT_EQ(onnxc_session_run(m.s), ONNXC_OK) << onnxc_session_last_error(m.s);
  std::vector<int64_t> dims;
  std::vector<const char*> y = m.output<const char*>(0, &dims);
  EXPECT_EQ(std::vector<std::string>(y.begin(), y.end()), (std::vector<std::string>{"ab\xc3\xa9", "\xc3\xa9", "caf\xc3\xa9"}));
  EXPECT_EQ(dims, (std::vector<int64_t>{3}));
}
#endif

}  // namespace
}  // namespace onnxc::test
