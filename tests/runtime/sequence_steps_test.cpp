// ABI v5 value host ops through the public API, on hand-written descriptors (no kernels): sequences and
// optionals as inputs and outputs (onnxc_session_set_input_value / get_output_value), SequenceInsert at
// the back, front and a negative position, SequenceAt binding its output dims from data, SequenceErase,
// SequenceLength, empty optionals, out-of-range positions failing the run, and the descriptor checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "desc_builder.h"
#include "onnxc/runtime.h"

namespace {

using ::testing::HasSubstr;

enum { E_N, E_P, E_M, E_ONE, E_ZERO };
const char *const kSymbols[] = {"n", "p", "m"};
const uint32_t kExprStart[] = {0, 2, 4, 6, 8, 10};
const int64_t kExprCode[] = {ONNXC_EXPR_SYM, 0, ONNXC_EXPR_SYM, 1, ONNXC_EXPR_SYM, 2, ONNXC_EXPR_CONST, 1, ONNXC_EXPR_CONST, 0};
const int32_t kDimsN[] = {E_N}, kDimsP[] = {E_P}, kDimsM[] = {E_M}, kDimsZero[] = {E_ZERO};
const int32_t kBindM[] = {2};

constexpr int32_t F32 = 1, I64 = 7, BOOL = 9;

// A descriptor over static arrays the caller keeps alive.
struct Model {
  std::vector<onnxc_tensor_desc> tensors;
  std::vector<int32_t> inputs, outputs;
  std::vector<std::vector<int32_t>> args;
  std::vector<onnxc_step> steps;
  onnxc_model_desc d{};

  const onnxc_model_desc *get() {
    d = onnxc_model_desc{};
    d.abi_version = ONNXC_ABI_VERSION;
    d.name = "values";
    d.target = "host";
    d.producer = "test";
    d.n_symbols = 3;
    d.symbols = kSymbols;
    d.n_exprs = 5;
    d.expr_start = kExprStart;
    d.expr_code = kExprCode;
    d.n_tensors = static_cast<uint32_t>(tensors.size());
    d.tensors = tensors.data();
    d.n_inputs = static_cast<uint32_t>(inputs.size());
    d.inputs = inputs.data();
    d.n_outputs = static_cast<uint32_t>(outputs.size());
    d.outputs = outputs.data();
    for (size_t k = 0; k < steps.size(); k++) steps[k].args = args[k].data();
    d.n_steps = static_cast<uint32_t>(steps.size());
    d.steps = steps.data();
    return &d;
  }
  void step(int32_t op, std::vector<int32_t> a, int32_t n_binds = 0) {
    args.push_back(std::move(a));
    steps.push_back({op, static_cast<int32_t>(args.back().size()), nullptr, ONNXC_STEP_HOST, n_binds, n_binds ? kBindM : nullptr});
  }
};

onnxc_tensor_desc value(const char *name, int32_t kind, int32_t value_kind, int32_t dtype = F32) {
  return {name, dtype, kind, 0, nullptr, -1, 0, 0, value_kind};
}
onnxc_tensor_desc tensor(const char *name, int32_t kind, int32_t dtype, int32_t rank, const int32_t *dims) {
  return {name, dtype, kind, rank, dims, -1, 0, 0, ONNXC_VALUE_TENSOR};
}

// s (seq f32), t (f32[n]), pos (i64[p]) -> y = SequenceInsert(s, t, pos), len = SequenceLength(y),
// at = SequenceAt(y, pos) (f32[m], m bound from data), e = SequenceErase(y, pos).
Model insert_model() {
  Model m;
  m.tensors = {value("s", ONNXC_TENSOR_INPUT, ONNXC_VALUE_SEQUENCE),
               tensor("t", ONNXC_TENSOR_INPUT, F32, 1, kDimsN),
               tensor("pos", ONNXC_TENSOR_INPUT, I64, 1, kDimsP),
               value("y", ONNXC_TENSOR_OUTPUT, ONNXC_VALUE_SEQUENCE),
               tensor("len", ONNXC_TENSOR_OUTPUT, I64, 0, nullptr),
               tensor("at", ONNXC_TENSOR_OUTPUT, F32, 1, kDimsM),
               value("e", ONNXC_TENSOR_OUTPUT, ONNXC_VALUE_SEQUENCE)};
  m.inputs = {0, 1, 2};
  m.outputs = {3, 4, 5, 6};
  m.step(ONNXC_HOST_SEQ_INSERT, {0, 1, 2, 3});
  m.step(ONNXC_HOST_SEQ_LENGTH, {3, 4});
  m.step(ONNXC_HOST_SEQ_AT, {3, 2, 5}, 1);
  m.step(ONNXC_HOST_SEQ_ERASE, {3, 2, 6});
  return m;
}

using Session = LoadedDesc;

// The first element of each tensor of a sequence output (every test tensor is filled with one value).
std::vector<float> heads(onnxc_session *s, size_t output) {
  onnxc_value v;
  EXPECT_EQ(onnxc_session_get_output_value(s, output, &v), ONNXC_OK) << onnxc_session_last_error(s);
  std::vector<float> r;
  for (size_t i = 0; i < v.count; i++) r.push_back(v.tensors[i].rank && v.tensors[i].dims[0] ? *static_cast<float *>(v.tensors[i].data) : -1.0f);
  return r;
}

// Runs insert_model with s = tensors of length 1 filled with `seq`, t = {9, 9}, pos = `pos` (empty: absent).
onnxc_status run_insert(onnxc_session *s, const std::vector<float> &seq, std::vector<int64_t> pos) {
  std::vector<onnxc_tensor> items;
  static const int64_t one = 1;
  for (const float &x : seq) items.push_back({F32, 1, &one, const_cast<float *>(&x)});
  onnxc_value sv{ONNXC_VALUE_SEQUENCE, 1, items.size(), items.data()};
  EXPECT_EQ(onnxc_session_set_input_value(s, 0, &sv), ONNXC_OK) << onnxc_session_last_error(s);
  float t[2] = {9, 9};
  int64_t n = 2, p = static_cast<int64_t>(pos.size());
  onnxc_tensor tt{F32, 1, &n, t}, pt{I64, 1, &p, pos.data()};
  EXPECT_EQ(onnxc_session_set_input(s, 1, &tt), ONNXC_OK) << onnxc_session_last_error(s);
  EXPECT_EQ(onnxc_session_set_input(s, 2, &pt), ONNXC_OK) << onnxc_session_last_error(s);
  return onnxc_session_run(s);
}

TEST(SequenceSteps, InsertAtBackFrontAndNegative) {
  Model m = insert_model();
  Session s(m.get());
  ASSERT_TRUE(s.session);
  // Absent position: at the back; SequenceAt / SequenceErase then have no position either (the last).
  ASSERT_EQ(run_insert(s.session, {1, 2}, {}), ONNXC_ERR_INVALID_ARGUMENT);  // SequenceAt needs a position
  EXPECT_THAT(onnxc_session_last_error(s.session), HasSubstr("position -1 is out of range for sequence 'y' of 3 tensors"));

  ASSERT_EQ(run_insert(s.session, {1, 2}, {0}), ONNXC_OK) << onnxc_session_last_error(s.session);
  EXPECT_EQ(heads(s.session, 0), (std::vector<float>{9, 1, 2}));
  onnxc_tensor len, at;
  ASSERT_EQ(onnxc_session_get_output(s.session, 1, &len), ONNXC_OK);
  EXPECT_EQ(*static_cast<int64_t *>(len.data), 3);
  ASSERT_EQ(onnxc_session_get_output(s.session, 2, &at), ONNXC_OK);
  ASSERT_EQ(at.rank, 1);
  EXPECT_EQ(at.dims[0], 2);  // m bound from the tensor read
  EXPECT_EQ(static_cast<float *>(at.data)[1], 9.0f);
  EXPECT_EQ(heads(s.session, 3), (std::vector<float>{1, 2}));

  ASSERT_EQ(run_insert(s.session, {1, 2}, {-1}), ONNXC_OK) << onnxc_session_last_error(s.session);
  EXPECT_EQ(heads(s.session, 0), (std::vector<float>{1, 9, 2}));  // -1: before the last
  ASSERT_EQ(onnxc_session_get_output(s.session, 2, &at), ONNXC_OK);
  EXPECT_EQ(at.dims[0], 1);  // at -1 of y: tensor {2}, another m than the last run
  EXPECT_EQ(static_cast<float *>(at.data)[0], 2.0f);
  EXPECT_EQ(heads(s.session, 3), (std::vector<float>{1, 9}));

  ASSERT_EQ(run_insert(s.session, {1, 2}, {2}), ONNXC_OK) << onnxc_session_last_error(s.session);
  EXPECT_EQ(heads(s.session, 0), (std::vector<float>{1, 2, 9}));  // 2 == count: at the back
}

// An absent position is an empty int64 weight; a model whose only weights are empty has no blob.
TEST(SequenceSteps, AbsentPositionIsAnEmptyWeight) {
  Model m;
  m.tensors = {value("s", ONNXC_TENSOR_INPUT, ONNXC_VALUE_SEQUENCE), tensor("t", ONNXC_TENSOR_INPUT, F32, 1, kDimsN),
               tensor("pos", ONNXC_TENSOR_WEIGHT, I64, 1, kDimsZero), value("y", ONNXC_TENSOR_OUTPUT, ONNXC_VALUE_SEQUENCE)};
  m.inputs = {0, 1};
  m.outputs = {3};
  m.step(ONNXC_HOST_SEQ_INSERT, {0, 1, 2, 3});
  Session s(m.get());
  ASSERT_TRUE(s.session);
  float one = 1, t[2] = {9, 9};
  int64_t d1 = 1, n = 2;
  onnxc_tensor item{F32, 1, &d1, &one}, tt{F32, 1, &n, t};
  onnxc_value sv{ONNXC_VALUE_SEQUENCE, 1, 1, &item};
  ASSERT_EQ(onnxc_session_set_input_value(s.session, 0, &sv), ONNXC_OK);
  ASSERT_EQ(onnxc_session_set_input(s.session, 1, &tt), ONNXC_OK);
  ASSERT_EQ(onnxc_session_run(s.session), ONNXC_OK) << onnxc_session_last_error(s.session);
  EXPECT_EQ(heads(s.session, 0), (std::vector<float>{1, 9}));  // at the back
}

TEST(SequenceSteps, EmptySequenceAndOutOfRange) {
  Model m = insert_model();
  Session s(m.get());
  ASSERT_TRUE(s.session);
  ASSERT_EQ(run_insert(s.session, {}, {0}), ONNXC_OK) << onnxc_session_last_error(s.session);
  EXPECT_EQ(heads(s.session, 0), (std::vector<float>{9}));
  EXPECT_EQ(heads(s.session, 3), (std::vector<float>{}));  // erased again: an empty sequence

  EXPECT_EQ(run_insert(s.session, {1}, {2}), ONNXC_ERR_INVALID_ARGUMENT);  // past count
  EXPECT_THAT(onnxc_session_last_error(s.session), HasSubstr("step 0 (SequenceInsert): position 2 is out of range for sequence 's' of 1 tensors"));
  EXPECT_EQ(run_insert(s.session, {1}, {-3}), ONNXC_ERR_INVALID_ARGUMENT);
  onnxc_value v;
  EXPECT_EQ(onnxc_session_get_output_value(s.session, 0, &v), ONNXC_ERR_INVALID_ARGUMENT);  // failed run: nothing to read
  onnxc_tensor t;
  EXPECT_EQ(onnxc_session_get_output(s.session, 0, &t), ONNXC_ERR_INVALID_ARGUMENT);
}

// o (optional f32) -> has = OptionalHasElement(o), c = Identity(o), g = OptionalGetElement(o) (f32[m]).
Model optional_model(bool get) {
  Model m;
  m.tensors = {value("o", ONNXC_TENSOR_INPUT, ONNXC_VALUE_OPTIONAL_TENSOR),
               tensor("has", ONNXC_TENSOR_OUTPUT, BOOL, 0, nullptr),
               value("c", ONNXC_TENSOR_OUTPUT, ONNXC_VALUE_OPTIONAL_TENSOR),
               tensor("g", ONNXC_TENSOR_OUTPUT, F32, 1, kDimsM)};
  m.inputs = {0};
  m.outputs = {1, 2};
  m.step(ONNXC_HOST_OPT_HAS, {0, 1});
  m.step(ONNXC_HOST_VALUE_COPY, {0, 2});
  if (get) {
    m.outputs.push_back(3);
    m.step(ONNXC_HOST_OPT_GET, {0, 3}, 1);
  } else {
    m.tensors.pop_back();
  }
  return m;
}

TEST(SequenceSteps, Optionals) {
  float data[3] = {4, 5, 6};
  int64_t n = 3;
  onnxc_tensor x{F32, 1, &n, data};
  for (bool present : {true, false}) {
    Model m = optional_model(false);
    Session s(m.get());
    ASSERT_TRUE(s.session);
    onnxc_value o{ONNXC_VALUE_OPTIONAL_TENSOR, present, 1, &x};
    ASSERT_EQ(onnxc_session_set_input_value(s.session, 0, &o), ONNXC_OK) << onnxc_session_last_error(s.session);
    ASSERT_EQ(onnxc_session_run(s.session), ONNXC_OK) << onnxc_session_last_error(s.session);
    onnxc_tensor has;
    ASSERT_EQ(onnxc_session_get_output(s.session, 0, &has), ONNXC_OK);
    EXPECT_EQ(*static_cast<uint8_t *>(has.data), present ? 1 : 0);
    onnxc_value c;
    ASSERT_EQ(onnxc_session_get_output_value(s.session, 1, &c), ONNXC_OK);
    EXPECT_EQ(c.kind, ONNXC_VALUE_OPTIONAL_TENSOR);
    EXPECT_EQ(c.present, present ? 1 : 0);
    EXPECT_EQ(c.count, present ? 1u : 0u);
    if (present) {
      EXPECT_EQ(static_cast<float *>(c.tensors[0].data)[2], 6.0f);
    }
  }
  Model m = optional_model(true);
  Session s(m.get());
  ASSERT_TRUE(s.session);
  onnxc_value o{ONNXC_VALUE_OPTIONAL_TENSOR, 1, 1, &x};
  ASSERT_EQ(onnxc_session_set_input_value(s.session, 0, &o), ONNXC_OK);
  ASSERT_EQ(onnxc_session_run(s.session), ONNXC_OK) << onnxc_session_last_error(s.session);
  onnxc_tensor g;
  ASSERT_EQ(onnxc_session_get_output(s.session, 2, &g), ONNXC_OK);
  EXPECT_EQ(g.dims[0], 3);
  EXPECT_EQ(static_cast<float *>(g.data)[0], 4.0f);
  o.present = 0;  // the data is copied when set: the caller's buffer is no longer read
  ASSERT_EQ(onnxc_session_set_input_value(s.session, 0, &o), ONNXC_OK);
  EXPECT_EQ(onnxc_session_run(s.session), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(onnxc_session_last_error(s.session), HasSubstr("step 2 (OptionalGetElement): 'o' is an empty optional"));
}

TEST(SequenceSteps, WrongKindsAreRefused) {
  Model m = insert_model();
  Session s(m.get());
  ASSERT_TRUE(s.session);
  float x = 1;
  int64_t one = 1;
  onnxc_tensor t{F32, 1, &one, &x}, wrong{I64, 1, &one, &x};
  EXPECT_EQ(onnxc_session_set_input(s.session, 0, &t), ONNXC_ERR_INVALID_ARGUMENT);  // a sequence input
  EXPECT_THAT(onnxc_session_last_error(s.session), HasSubstr("set it with onnxc_session_set_input_value"));
  onnxc_value v{ONNXC_VALUE_OPTIONAL_TENSOR, 1, 1, &t};
  EXPECT_EQ(onnxc_session_set_input_value(s.session, 0, &v), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(onnxc_session_last_error(s.session), HasSubstr("input 's' (index 0) is a sequence but the value given is an optional tensor"));
  v = {ONNXC_VALUE_SEQUENCE, 1, 1, &wrong};
  EXPECT_EQ(onnxc_session_set_input_value(s.session, 0, &v), ONNXC_ERR_DTYPE_MISMATCH);
  EXPECT_EQ(onnxc_session_run(s.session), ONNXC_ERR_INVALID_ARGUMENT);  // s not set
}

TEST(SequenceSteps, DescriptorChecks) {
  Model m = insert_model();
  m.tensors[3].rank = 1;
  m.tensors[3].dims = kDimsN;
  EXPECT_THAT(load_error(m.get()), HasSubstr("tensor 3 ('y') is a sequence or optional, which must have rank 0"));
  m = insert_model();
  m.tensors[3].value = 7;
  EXPECT_THAT(load_error(m.get()), HasSubstr("tensor 3 ('y') has unknown value kind 7"));
  m = insert_model();
  m.args[1] = {1, 4};  // SequenceLength of a tensor
  EXPECT_THAT(load_error(m.get()), HasSubstr("step 1 (SequenceLength): needs sequence, int64 scalar"));
  m = insert_model();
  m.steps[0].kernel = ONNXC_HOST_NONZERO;
  m.args[0] = {0, 3};
  EXPECT_THAT(load_error(m.get()), HasSubstr("step 0 arg 0 is tensor 0 ('s'), a sequence or optional, which only value host ops take"));
}

}  // namespace
