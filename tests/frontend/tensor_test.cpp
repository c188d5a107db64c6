// TensorProto <-> ir::Tensor for every dtype, raw and typed fields; test-data sequences/optionals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "frontend/tensor_io.h"
#include "ir/error.h"
#include "test_util.h"

namespace onnxc::frontend {
namespace {

using ir::DType;
using test::TempDir;
using ::testing::HasSubstr;

const DType kAllDTypes[] = {DType::Float32, DType::UInt8,  DType::Int8,      DType::UInt16,     DType::Int16,
                            DType::Int32,   DType::Int64,  DType::String,    DType::Bool,       DType::Float16,
                            DType::Float64, DType::UInt32, DType::UInt64,    DType::Complex64,  DType::Complex128,
                            DType::BFloat16};

// A 2x3 tensor of `dt` with distinct, dtype-appropriate bytes in every element.
ir::Tensor sample(DType dt) {
  if (dt == DType::String) return ir::Tensor::strings({2, 3}, {"a", "", "ccc", "\xff\x00z", "long string here", "é"});
  ir::Tensor t(dt, {2, 3});
  auto* b = static_cast<uint8_t*>(t.mutable_raw());
  for (size_t i = 0; i < t.nbytes(); ++i) b[i] = static_cast<uint8_t>(i * 37 + 11);
  if (dt == DType::Bool)
    for (size_t i = 0; i < t.nbytes(); ++i) b[i] = i % 2;
  return t;
}

TEST(FrontendTensor, RoundTripEveryDType) {
  TempDir d;
  for (DType dt : kAllDTypes) {
    SCOPED_TRACE(std::string(ir::dtype_name(dt)));
    ir::Tensor t = sample(dt);
    std::string path = d.file(std::string(ir::dtype_name(dt)) + ".pb");
    save_tensor_pb(t, "t_" + std::string(ir::dtype_name(dt)), path);
    std::string name;
    ir::Tensor back = load_tensor_pb(path, &name);
    EXPECT_EQ(name, "t_" + std::string(ir::dtype_name(dt)));
    EXPECT_TRUE(back.same_contents(t));
    // Scalars and empty tensors too.
    ir::Tensor empty = dt == DType::String ? ir::Tensor::strings({0, 4}, {}) : ir::Tensor(dt, {0, 4});
    save_tensor_pb(empty, "", path);
    EXPECT_TRUE(load_tensor_pb(path).same_contents(empty));
    ir::Tensor scalar = dt == DType::String ? ir::Tensor::strings({}, {"s"}) : ir::Tensor(dt, {});
    save_tensor_pb(scalar, "", path);
    EXPECT_TRUE(load_tensor_pb(path).same_contents(scalar));
  }
  EXPECT_EQ(d.list().size(), std::size(kAllDTypes));  // no temporary files left behind
}

// Typed fields as ONNX specifies them: the narrow ints, bool and 16-bit floats in int32_data,
// uint32/uint64 in uint64_data, complex as (real, imaginary) pairs.
TEST(FrontendTensor, TypedFields) {
  TempDir d;
  std::string path = d.file("t.pb");
  auto load = [&](const onnx::TensorProto& p) {
    test::write_bytes(path, p.SerializeAsString());
    return load_tensor_pb(path);
  };
  auto proto = [](DType dt, std::vector<int64_t> dims) {
    onnx::TensorProto p;
    p.set_data_type(static_cast<int>(dt));
    for (auto x : dims) p.add_dims(x);
    return p;
  };
  {
    auto p = proto(DType::Int8, {3});
    for (int v : {-128, 5, 127}) p.add_int32_data(v);
    ir::Tensor t = load(p);
    EXPECT_EQ(t.get_i64(0), -128);
    EXPECT_EQ(t.get_i64(2), 127);
  }
  {
    auto p = proto(DType::UInt8, {2});
    for (int v : {0, 255}) p.add_int32_data(v);
    EXPECT_EQ(load(p).get_i64(1), 255);
  }
  {
    auto p = proto(DType::Int16, {2});
    for (int v : {-32768, 32767}) p.add_int32_data(v);
    EXPECT_EQ(load(p).get_i64(0), -32768);
  }
  {
    auto p = proto(DType::UInt16, {1});
    p.add_int32_data(65535);
    EXPECT_EQ(load(p).get_i64(0), 65535);
  }
  {
    auto p = proto(DType::Bool, {3});
    for (int v : {1, 0, 1}) p.add_int32_data(v);
    ir::Tensor t = load(p);
    EXPECT_EQ(t.get_i64(0), 1);
    EXPECT_EQ(t.get_i64(1), 0);
  }
  {
    auto p = proto(DType::Float16, {2});
    p.add_int32_data(ir::f32_to_f16(1.5f));
    p.add_int32_data(ir::f32_to_f16(-2.0f));
    ir::Tensor t = load(p);
    EXPECT_EQ(t.get_f64(0), 1.5);
    EXPECT_EQ(t.get_f64(1), -2.0);
  }
  {
    auto p = proto(DType::BFloat16, {1});
    p.add_int32_data(ir::f32_to_bf16(3.0f));
    EXPECT_EQ(load(p).get_f64(0), 3.0);
  }
  {
    auto p = proto(DType::Int32, {1});
    p.add_int32_data(-7);
    EXPECT_EQ(load(p).get_i64(0), -7);
  }
  {
    auto p = proto(DType::Int64, {1});
    p.add_int64_data(int64_t{1} << 40);
    EXPECT_EQ(load(p).get_i64(0), int64_t{1} << 40);
  }
  {
    auto p = proto(DType::UInt32, {1});
    p.add_uint64_data(4000000000u);
    EXPECT_EQ(load(p).get_i64(0), 4000000000);
  }
  {
    auto p = proto(DType::UInt64, {1});
    p.add_uint64_data(~uint64_t{0});
    EXPECT_EQ(load(p).data<uint64_t>()[0], ~uint64_t{0});
  }
  {
    auto p = proto(DType::Float64, {1});
    p.add_double_data(0.1);
    EXPECT_EQ(load(p).get_f64(0), 0.1);
  }
  {
    auto p = proto(DType::Float32, {1});
    p.add_float_data(0.25f);
    EXPECT_EQ(load(p).get_f64(0), 0.25);
  }
  {
    auto p = proto(DType::Complex64, {2});
    for (float v : {1.f, 2.f, 3.f, 4.f}) p.add_float_data(v);
    ir::Tensor t = load(p);
    EXPECT_EQ(t.nbytes(), 16u);
    EXPECT_EQ(t.data<float>()[3], 4.f);
  }
  {
    auto p = proto(DType::Complex128, {1});
    for (double v : {1.0, -1.0}) p.add_double_data(v);
    EXPECT_EQ(load(p).data<double>()[1], -1.0);
  }
  {
    auto p = proto(DType::String, {2});
    p.add_string_data("x");
    p.add_string_data("yz");
    EXPECT_EQ(load(p).string_data()[1], "yz");
  }
}

TEST(FrontendTensor, Errors) {
  TempDir d;
  std::string path = d.file("bad.pb");
  auto error_of = [&](const onnx::TensorProto& p) {
    test::write_bytes(path, p.SerializeAsString());
    return test::user_error_of([&] { load_tensor_pb(path); });
  };
  onnx::TensorProto p;
  p.set_name("w");
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(4);
  p.set_raw_data(std::string(12, '\0'));
  std::string e = error_of(p);
  EXPECT_THAT(e, HasSubstr("bad.pb"));
  EXPECT_THAT(e, HasSubstr("tensor 'w'"));
  EXPECT_THAT(e, HasSubstr("raw_data holds 12 bytes, but its dtype and dims need 16"));

  p.clear_raw_data();
  EXPECT_THAT(error_of(p), HasSubstr("the tensor has no data"));

  p.set_data_type(99);
  EXPECT_THAT(error_of(p), HasSubstr("unsupported data type 99"));

  test::write_bytes(path, "input_0 = [1, 2, 3]\n");
  e = test::user_error_of([&] { load_tensor_pb(path); });
  EXPECT_THAT(e, HasSubstr("is not an ONNX TensorProto"));
  EXPECT_THAT(e, HasSubstr("text file"));
}

TEST(FrontendTensor, SequenceAndOptionalValues) {
  TempDir d;
  ir::Type seq_t = ir::Type::container(ir::Type::Kind::Sequence, ir::Type::tensor(DType::Float32));
  ir::Type opt_t = ir::Type::container(ir::Type::Kind::Optional, ir::Type::tensor(DType::Float32));

  TestValue seq;
  seq.kind = TestValue::Kind::Sequence;
  seq.name = "seq";
  for (int i = 0; i < 3; ++i) {
    TestValue e;
    e.tensor = sample(DType::Float32);
    seq.elements.push_back(e);
  }
  save_test_value_pb(seq, d.file("seq.pb"));
  TestValue back = load_test_value_pb(d.file("seq.pb"), seq_t);
  EXPECT_EQ(back.kind, TestValue::Kind::Sequence);
  EXPECT_EQ(back.name, "seq");
  ASSERT_EQ(back.elements.size(), 3u);
  EXPECT_TRUE(back.elements[2].tensor.same_contents(seq.elements[2].tensor));

  TestValue opt;
  opt.kind = TestValue::Kind::Optional;
  opt.name = "opt";
  save_test_value_pb(opt, d.file("none.pb"));
  back = load_test_value_pb(d.file("none.pb"), opt_t);
  EXPECT_EQ(back.kind, TestValue::Kind::Optional);
  EXPECT_TRUE(back.elements.empty());
  opt.elements.push_back(seq.elements[0]);
  save_test_value_pb(opt, d.file("some.pb"));
  back = load_test_value_pb(d.file("some.pb"), opt_t);
  ASSERT_EQ(back.elements.size(), 1u);
  EXPECT_TRUE(back.elements[0].tensor.same_contents(seq.elements[0].tensor));

  ir::Type map_t = ir::Type::container(ir::Type::Kind::Map, ir::Type::tensor(DType::Float32));
  EXPECT_THAT(test::user_error_of([&] { load_test_value_pb(d.file("some.pb"), map_t); }),
              HasSubstr("does not support"));
}

}  // namespace
}  // namespace onnxc::frontend
