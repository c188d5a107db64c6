// ABI v5 value host ops through the public API, on hand-written descriptors (no kernels): sequences and
// optionals as inputs and outputs (onnxc_session_set_input_value / get_output_value), SequenceInsert at
// the back, front and a negative position, SequenceAt binding its output dims from data, SequenceErase,
// SequenceLength, empty optionals, out-of-range positions failing the run, SplitToSequence, and the
// descriptor checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "desc_builder.h"
#include "onnxc/runtime.h"

namespace {

using ::testing::HasSubstr;

constexpr int32_t F32 = 1, I64 = 7, BOOL = 9;
constexpr int32_t IN = ONNXC_TENSOR_INPUT, OUT = ONNXC_TENSOR_OUTPUT;

// Expressions of every model here: symbols n and p (input dims), m (bound from data by SequenceAt and
// OptionalGetElement: symbol 2), and the constant 0.
enum { E_N, E_P, E_M, E_ZERO };
const std::vector<int32_t> kBindM = {2};

DescBuilder values_model() {
  DescBuilder b("values");
  b.symbol("n");
  b.symbol("p");
  b.symbol("m");
  b.constant(0);
  return b;
}

// s (seq f32), t (f32[n]), pos (i64[p]) -> y = SequenceInsert(s, t, pos), len = SequenceLength(y),
// at = SequenceAt(y, pos) (f32[m], m bound from data), e = SequenceErase(y, pos).
DescBuilder insert_model() {
  DescBuilder b = values_model();
  int32_t s = b.tensor("s", F32, IN, {}, ONNXC_VALUE_SEQUENCE), t = b.input("t", F32, {E_N}), pos = b.input("pos", I64, {E_P});
  int32_t y = b.tensor("y", F32, OUT, {}, ONNXC_VALUE_SEQUENCE), len = b.output("len", I64, {}), at = b.output("at", F32, {E_M});
  int32_t e = b.tensor("e", F32, OUT, {}, ONNXC_VALUE_SEQUENCE);
  b.host(ONNXC_HOST_SEQ_INSERT, {s, t, pos, y});
  b.host(ONNXC_HOST_SEQ_LENGTH, {y, len});
  b.host(ONNXC_HOST_SEQ_AT, {y, pos, at}, kBindM);
  b.host(ONNXC_HOST_SEQ_ERASE, {y, pos, e});
  return b;
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
  DescBuilder m = insert_model();
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
  DescBuilder m = values_model();
  int32_t seq = m.tensor("s", F32, IN, {}, ONNXC_VALUE_SEQUENCE), tensor = m.input("t", F32, {E_N});
  int32_t pos = m.weight("pos", I64, {E_ZERO}, 0, 0), y = m.tensor("y", F32, OUT, {}, ONNXC_VALUE_SEQUENCE);
  m.host(ONNXC_HOST_SEQ_INSERT, {seq, tensor, pos, y});
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
  DescBuilder m = insert_model();
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
DescBuilder optional_model(bool get) {
  DescBuilder m = values_model();
  int32_t o = m.tensor("o", F32, IN, {}, ONNXC_VALUE_OPTIONAL_TENSOR), has = m.output("has", BOOL, {});
  int32_t c = m.tensor("c", F32, OUT, {}, ONNXC_VALUE_OPTIONAL_TENSOR);
  m.host(ONNXC_HOST_OPT_HAS, {o, has});
  m.host(ONNXC_HOST_VALUE_COPY, {o, c});
  if (get) m.host(ONNXC_HOST_OPT_GET, {o, m.output("g", F32, {E_M})}, kBindM);
  return m;
}

TEST(SequenceSteps, Optionals) {
  float data[3] = {4, 5, 6};
  int64_t n = 3;
  onnxc_tensor x{F32, 1, &n, data};
  for (bool present : {true, false}) {
    DescBuilder m = optional_model(false);
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
  DescBuilder m = optional_model(true);
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

// x (f32[2, n]), split (i64[p]: absent, one length, or the lengths) -> y = SplitToSequence(x, split)
// along axis 1 with keepdims (a scalar split is the same tensor of rank 0: split_scalar_model).
DescBuilder split_model(bool scalar_split, int64_t keepdims) {
  DescBuilder b("split");
  int32_t n = b.symbol("n"), p = scalar_split ? -1 : b.symbol("p");
  int32_t two = b.constant(2), axis = b.constant(1), keep = b.constant(keepdims);
  int32_t x = b.input("x", F32, {two, n});
  int32_t split = scalar_split ? b.input("split", I64, {}) : b.input("split", I64, {p});
  int32_t y = b.tensor("y", F32, OUT, {}, ONNXC_VALUE_SEQUENCE);
  b.host(ONNXC_HOST_SPLIT_TO_SEQ, {x, split, y, DescBuilder::scalar(axis), DescBuilder::scalar(keep)});
  return b;
}

// The tensors of sequence output 0 as dims and values.
std::vector<std::pair<std::vector<int64_t>, std::vector<float>>> parts(onnxc_session *s) {
  onnxc_value v;
  EXPECT_EQ(onnxc_session_get_output_value(s, 0, &v), ONNXC_OK) << onnxc_session_last_error(s);
  std::vector<std::pair<std::vector<int64_t>, std::vector<float>>> r;
  for (size_t i = 0; i < v.count; i++) {
    const onnxc_tensor &t = v.tensors[i];
    std::vector<int64_t> dims(t.dims, t.dims + t.rank);
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    const float *f = static_cast<const float *>(t.data);
    r.push_back({dims, std::vector<float>(f, f + n)});
  }
  return r;
}

onnxc_status run_split(onnxc_session *s, std::vector<int64_t> split, bool scalar_split) {
  static float x[10] = {0, 1, 2, 3, 4, 10, 11, 12, 13, 14};  // [2, 5]
  static const int64_t xd[2] = {2, 5};
  static int64_t none = 0;  // the data of 0 elements
  int64_t p = static_cast<int64_t>(split.size());
  onnxc_tensor xt{F32, 2, xd, x}, st{I64, scalar_split ? 0 : 1, &p, split.empty() ? &none : split.data()};
  EXPECT_EQ(onnxc_session_set_input(s, 0, &xt), ONNXC_OK) << onnxc_session_last_error(s);
  EXPECT_EQ(onnxc_session_set_input(s, 1, &st), ONNXC_OK) << onnxc_session_last_error(s);
  return onnxc_session_run(s);
}

using Parts = std::vector<std::pair<std::vector<int64_t>, std::vector<float>>>;

TEST(SequenceSteps, SplitToSequence) {
  DescBuilder lengths = split_model(false, 1);
  Session s(lengths.get());
  ASSERT_TRUE(s.session);
  ASSERT_EQ(run_split(s.session, {2, 0, 3}, false), ONNXC_OK) << onnxc_session_last_error(s.session);
  EXPECT_EQ(parts(s.session), (Parts{{{2, 2}, {0, 1, 10, 11}}, {{2, 0}, {}}, {{2, 3}, {2, 3, 4, 12, 13, 14}}}));
  EXPECT_EQ(run_split(s.session, {2, 2}, false), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(onnxc_session_last_error(s.session), HasSubstr("split lengths do not add up to the axis (sum, dim) (4, 5) for 'x'"));
  EXPECT_EQ(run_split(s.session, {-1, 6}, false), ONNXC_ERR_INVALID_ARGUMENT);
  // Absent split (0 elements): parts of length 1; keepdims 0 removes the axis.
  ASSERT_EQ(run_split(s.session, {}, false), ONNXC_OK) << onnxc_session_last_error(s.session);
  EXPECT_EQ(parts(s.session).size(), 5u);
  EXPECT_EQ(parts(s.session)[4], (std::pair<std::vector<int64_t>, std::vector<float>>{{2, 1}, {4, 14}}));
  DescBuilder dropped = split_model(false, 0);
  Session d(dropped.get());
  ASSERT_EQ(run_split(d.session, {}, false), ONNXC_OK) << onnxc_session_last_error(d.session);
  EXPECT_EQ(parts(d.session)[1], (std::pair<std::vector<int64_t>, std::vector<float>>{{2}, {1, 11}}));
  // A scalar: parts of that length, the last one shorter.
  DescBuilder chunks = split_model(true, 1);
  Session c(chunks.get());
  ASSERT_EQ(run_split(c.session, {2}, true), ONNXC_OK) << onnxc_session_last_error(c.session);
  EXPECT_EQ(parts(c.session), (Parts{{{2, 2}, {0, 1, 10, 11}}, {{2, 2}, {2, 3, 12, 13}}, {{2, 1}, {4, 14}}}));
  EXPECT_EQ(run_split(c.session, {0}, true), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(onnxc_session_last_error(c.session), HasSubstr("split length must be positive"));
}

TEST(SequenceSteps, WrongKindsAreRefused) {
  DescBuilder m = insert_model();
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
  DescBuilder m = insert_model();
  m.set_dims(3, {E_N});
  EXPECT_THAT(load_error(m.get()), HasSubstr("tensor 3 ('y') is a sequence or optional, which must have rank 0"));
  m = insert_model();
  m.tensors[3].value = 7;
  EXPECT_THAT(load_error(m.get()), HasSubstr("tensor 3 ('y') has unknown value kind 7"));
  m = insert_model();
  m.set_args(1, {1, 4});  // SequenceLength of a tensor
  EXPECT_THAT(load_error(m.get()), HasSubstr("step 1 (SequenceLength): needs sequence, int64 scalar"));
  m = insert_model();
  m.steps[0].kernel = ONNXC_HOST_NONZERO;
  m.set_args(0, {0, 3});
  EXPECT_THAT(load_error(m.get()), HasSubstr("step 0 arg 0 is tensor 0 ('s'), a sequence or optional, which only value host ops take"));
}

}  // namespace
