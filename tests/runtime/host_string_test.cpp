// Host ops on hand-written descriptors through the public API: string tensors (StringNormalizer,
// StringConcat, Cast to and from strings; the element is a const char *), TfIdfVectorizer and sizes given as data
// (VALUE_SIZE). No kernels: these steps run in the runtime's C.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "onnxc/runtime.h"

namespace {

using ::testing::HasSubstr;

// Expressions: 0 = n (input dim), 1 = count (bound by the step), then constants 0, 1, 2, bytes, 3.
enum { E_N, E_COUNT, E_ZERO, E_ONE, E_TWO, E_BYTES, E_THREE };

struct Model {
  std::vector<uint32_t> expr_start;
  std::vector<int64_t> expr_code;
  std::vector<int32_t> dims_n = {E_N}, dims_count = {E_COUNT}, dims_bytes = {E_BYTES}, dims_one_count = {E_ONE, E_COUNT};
  std::vector<onnxc_tensor_desc> tensors;
  std::vector<int32_t> inputs, outputs, args, binds;
  std::vector<onnxc_step> steps;
  std::vector<const char *> symbols = {"n", "count"};
  alignas(64) uint8_t weights[256] = {};
  onnxc_model_desc d{};
  onnxc_model *model = nullptr;
  onnxc_session *session = nullptr;

  explicit Model(int64_t weight_bytes) {
    auto add = [&](std::vector<int64_t> code) {
      expr_start.push_back(static_cast<uint32_t>(expr_code.size()));
      expr_code.insert(expr_code.end(), code.begin(), code.end());
    };
    add({ONNXC_EXPR_SYM, 0});
    add({ONNXC_EXPR_SYM, 1});
    add({ONNXC_EXPR_CONST, 0});
    add({ONNXC_EXPR_CONST, 1});
    add({ONNXC_EXPR_CONST, 2});
    add({ONNXC_EXPR_CONST, weight_bytes});
    add({ONNXC_EXPR_CONST, 3});
    expr_start.push_back(static_cast<uint32_t>(expr_code.size()));
  }
  ~Model() {
    onnxc_session_free(session);
    onnxc_model_free(model);
  }

  // One host step `op` over tensors; binds `bind` (or nothing).
  bool load(int32_t op, std::vector<int32_t> step_args, std::vector<int32_t> step_binds) {
    args = std::move(step_args);
    binds = std::move(step_binds);
    steps = {{op, static_cast<int32_t>(args.size()), args.data(), ONNXC_STEP_HOST, static_cast<int32_t>(binds.size()),
              binds.empty() ? nullptr : binds.data()}};
    d.abi_version = ONNXC_ABI_VERSION;
    d.name = "strings";
    d.target = "host";
    d.producer = "test";
    d.n_symbols = static_cast<uint32_t>(symbols.size());
    d.symbols = symbols.data();
    d.n_exprs = static_cast<uint32_t>(expr_start.size() - 1);
    d.expr_start = expr_start.data();
    d.expr_code = expr_code.data();
    d.n_tensors = static_cast<uint32_t>(tensors.size());
    d.tensors = tensors.data();
    d.n_inputs = static_cast<uint32_t>(inputs.size());
    d.inputs = inputs.data();
    d.n_outputs = static_cast<uint32_t>(outputs.size());
    d.outputs = outputs.data();
    d.n_steps = 1;
    d.steps = steps.data();
    d.weights = weights;
    d.weights_size = sizeof weights;
    if (onnxc_model_from_desc(&d, &model) != ONNXC_OK) return false;
    return onnxc_session_create(model, nullptr, &session) == ONNXC_OK;
  }

  onnxc_status run_strings(const std::vector<const char *> &x) {
    int64_t n = static_cast<int64_t>(x.size());
    onnxc_tensor in{ONNXC_DTYPE_STRING, 1, &n, const_cast<const char **>(x.data())};
    onnxc_status st = onnxc_session_set_input(session, 0, &in);
    return st == ONNXC_OK ? onnxc_session_run(session) : st;
  }

  std::vector<std::string> string_output() {
    onnxc_tensor out;
    EXPECT_EQ(onnxc_session_get_output(session, 0, &out), ONNXC_OK);
    EXPECT_EQ(out.dtype, ONNXC_DTYPE_STRING);
    std::vector<std::string> r;
    int64_t numel = 1;
    for (int32_t a = 0; a < out.rank; a++) numel *= out.dims[a];
    for (int64_t i = 0; i < numel; i++) r.emplace_back(static_cast<const char *const *>(out.data)[i]);
    return r;
  }
};

// x: string [n] -> StringNormalizer(stopwords) -> y: string [count].
void normalizer(Model &m, const std::vector<std::string> &stopwords, int64_t case_change, bool case_sensitive) {
  size_t at = 0;
  for (const std::string &w : stopwords) {
    std::memcpy(m.weights + at, w.c_str(), w.size() + 1);
    at += w.size() + 1;
  }
  m.tensors = {{"x", ONNXC_DTYPE_STRING, ONNXC_TENSOR_INPUT, 1, m.dims_n.data(), -1, 0, 0, ONNXC_VALUE_TENSOR},
               {"stopwords", ONNXC_DTYPE_UINT8, ONNXC_TENSOR_WEIGHT, 1, m.dims_bytes.data(), -1, 0, at ? at : 1, ONNXC_VALUE_TENSOR},
               {"y", ONNXC_DTYPE_STRING, ONNXC_TENSOR_OUTPUT, 1, m.dims_count.data(), -1, 0, 0, ONNXC_VALUE_TENSOR}};
  m.inputs = {0};
  m.outputs = {2};
  auto small = [](size_t v) { return v == 0 ? E_ZERO : v == 1 ? E_ONE : v == 2 ? E_TWO : E_THREE; };
  int32_t change = small(static_cast<size_t>(case_change)), count = small(stopwords.size());
  ASSERT_TRUE(m.load(ONNXC_HOST_STRING_NORMALIZER,
                     {0, 1, 2, -(change + 1), -((case_sensitive ? E_ONE : E_ZERO) + 1), -(count + 1)}, {1}))
      << onnxc_last_error();
}

int64_t bytes_of(const std::vector<std::string> &words) {
  int64_t n = 0;
  for (const auto &w : words) n += static_cast<int64_t>(w.size()) + 1;
  return n ? n : 1;  // no stopwords: one NUL byte
}

TEST(HostStrings, NormalizerDropsStopwordsIgnoringCaseAndUppercases) {
  std::vector<std::string> words = {"monday"};
  Model m(bytes_of(words));
  normalizer(m, words, 2, false);
  ASSERT_EQ(m.run_strings({"Monday", "tuesday", "", "MONDAY", "caf\xc3\xa9"}), ONNXC_OK) << onnxc_session_last_error(m.session);
  // The empty string is kept; bytes beyond ASCII pass through unchanged.
  EXPECT_EQ(m.string_output(), (std::vector<std::string>{"TUESDAY", "", "CAF\xc3\xa9"}));
}

TEST(HostStrings, NormalizerCaseSensitiveKeepsOtherSpellingsAndLowercases) {
  std::vector<std::string> words = {"monday", "x"};
  Model m(bytes_of(words));
  normalizer(m, words, 1, true);
  ASSERT_EQ(m.run_strings({"Monday", "monday", "X", "x"}), ONNXC_OK) << onnxc_session_last_error(m.session);
  EXPECT_EQ(m.string_output(), (std::vector<std::string>{"monday", "x"}));
  // A second run replaces the strings of the first.
  ASSERT_EQ(m.run_strings({"ABC"}), ONNXC_OK);
  EXPECT_EQ(m.string_output(), (std::vector<std::string>{"abc"}));
}

TEST(HostStrings, NormalizerWithoutStopwordsKeepsEmptyStrings) {
  Model m(bytes_of({}));
  normalizer(m, {}, 0, false);
  ASSERT_EQ(m.run_strings({"", "a", ""}), ONNXC_OK) << onnxc_session_last_error(m.session);
  EXPECT_EQ(m.string_output(), (std::vector<std::string>{"", "a", ""}));
}

TEST(HostStrings, NormalizerOfOnlyStopwordsGivesOneEmptyString) {
  std::vector<std::string> words = {"monday"};
  Model m(bytes_of(words));
  normalizer(m, words, 0, true);
  ASSERT_EQ(m.run_strings({"monday", "monday"}), ONNXC_OK) << onnxc_session_last_error(m.session);
  EXPECT_EQ(m.string_output(), (std::vector<std::string>{""}));
  ASSERT_EQ(m.run_strings({}), ONNXC_OK) << onnxc_session_last_error(m.session);
  EXPECT_EQ(m.string_output(), (std::vector<std::string>{""}));
}

// a [n] + b [count] -> StringConcat -> y [n]: b broadcasts when count is 1 and must equal n otherwise.
void concat_model(Model &m) {
  m.tensors = {{"a", ONNXC_DTYPE_STRING, ONNXC_TENSOR_INPUT, 1, m.dims_n.data(), -1, 0, 0, ONNXC_VALUE_TENSOR},
               {"b", ONNXC_DTYPE_STRING, ONNXC_TENSOR_INPUT, 1, m.dims_count.data(), -1, 0, 0, ONNXC_VALUE_TENSOR},
               {"y", ONNXC_DTYPE_STRING, ONNXC_TENSOR_OUTPUT, 1, m.dims_n.data(), -1, 0, 0, ONNXC_VALUE_TENSOR}};
  m.inputs = {0, 1};
  m.outputs = {2};
  ASSERT_TRUE(m.load(ONNXC_HOST_STRING_CONCAT, {0, 1, 2}, {})) << onnxc_last_error();
}

onnxc_status run_concat(Model &m, std::vector<const char *> a, std::vector<const char *> b) {
  int64_t na = static_cast<int64_t>(a.size()), nb = static_cast<int64_t>(b.size());
  onnxc_tensor ta{ONNXC_DTYPE_STRING, 1, &na, a.data()}, tb{ONNXC_DTYPE_STRING, 1, &nb, b.data()};
  EXPECT_EQ(onnxc_session_set_input(m.session, 0, &ta), ONNXC_OK);
  EXPECT_EQ(onnxc_session_set_input(m.session, 1, &tb), ONNXC_OK);
  return onnxc_session_run(m.session);
}

TEST(HostStrings, ConcatJoinsElementwiseAndBroadcasts) {
  Model m(0);
  concat_model(m);
  ASSERT_EQ(run_concat(m, {"abc", "", "caf"}, {"d", "e", "\xc3\xa9"}), ONNXC_OK) << onnxc_session_last_error(m.session);
  EXPECT_EQ(m.string_output(), (std::vector<std::string>{"abcd", "e", "caf\xc3\xa9"}));
  ASSERT_EQ(run_concat(m, {"x", "y"}, {"!"}), ONNXC_OK) << onnxc_session_last_error(m.session);
  EXPECT_EQ(m.string_output(), (std::vector<std::string>{"x!", "y!"}));
  ASSERT_EQ(run_concat(m, {}, {"!"}), ONNXC_OK) << onnxc_session_last_error(m.session);
  EXPECT_EQ(m.string_output(), (std::vector<std::string>{}));
}

TEST(HostStrings, ConcatRefusesShapesThatDoNotBroadcast) {
  Model m(0);
  concat_model(m);
  EXPECT_EQ(run_concat(m, {"a", "b"}, {"c", "d", "e"}), ONNXC_ERR_SHAPE_MISMATCH);
  EXPECT_THAT(onnxc_session_last_error(m.session),
              HasSubstr("step 0 (StringConcat): 'a' dim 0 is 2 and 'b' dim 0 is 3; they do not broadcast"));
}

TEST(HostStrings, ConcatChecksDtypesAtLoad) {
  Model m(0);
  m.tensors = {{"a", ONNXC_DTYPE_STRING, ONNXC_TENSOR_INPUT, 1, m.dims_n.data(), -1, 0, 0, ONNXC_VALUE_TENSOR},
               {"b", ONNXC_DTYPE_FLOAT, ONNXC_TENSOR_INPUT, 1, m.dims_n.data(), -1, 0, 0, ONNXC_VALUE_TENSOR},
               {"y", ONNXC_DTYPE_STRING, ONNXC_TENSOR_OUTPUT, 1, m.dims_n.data(), -1, 0, 0, ONNXC_VALUE_TENSOR}};
  m.inputs = {0, 1};
  m.outputs = {2};
  EXPECT_FALSE(m.load(ONNXC_HOST_STRING_CONCAT, {0, 1, 2}, {}));
  EXPECT_STREQ(onnxc_last_error(), "model 'strings': step 0 (StringConcat): A, B and Y must be strings");
}

// x [n] of `from` -> Cast -> y [n] of `to`.
void cast_model(Model &m, int32_t from, int32_t to) {
  m.tensors = {{"x", from, ONNXC_TENSOR_INPUT, 1, m.dims_n.data(), -1, 0, 0, ONNXC_VALUE_TENSOR},
               {"y", to, ONNXC_TENSOR_OUTPUT, 1, m.dims_n.data(), -1, 0, 0, ONNXC_VALUE_TENSOR}};
  m.inputs = {0};
  m.outputs = {1};
  ASSERT_TRUE(m.load(ONNXC_HOST_STRING_CAST, {0, 1}, {})) << onnxc_last_error();
}

TEST(HostStrings, FloatToStringPrintsTheShortestRoundTripLikeNumpy) {
  Model m(0);
  cast_model(m, ONNXC_DTYPE_FLOAT, ONNXC_DTYPE_STRING);
  std::vector<float> x = {0.9767611f, 0.039187793f, 1.0f, 123456.0f, 1e-5f, 1e-4f, 1e16f, -0.0f, 3.4e38f, NAN, INFINITY, -INFINITY};
  int64_t n = static_cast<int64_t>(x.size());
  onnxc_tensor in{ONNXC_DTYPE_FLOAT, 1, &n, x.data()};
  ASSERT_EQ(onnxc_session_set_input(m.session, 0, &in), ONNXC_OK);
  ASSERT_EQ(onnxc_session_run(m.session), ONNXC_OK) << onnxc_session_last_error(m.session);
  // numpy's str(np.float32(v)), except NaN and infinities, spelled as ONNX's string casts read them.
  EXPECT_EQ(m.string_output(), (std::vector<std::string>{"0.9767611", "0.039187793", "1.0", "123456.0", "1e-05", "1e-04",
                                                          "1e+16", "-0.0", "3.4e+38", "NaN", "INF", "-INF"}));
}

TEST(HostStrings, StringToFloatReadsOnnxSpellingsAndRefusesGarbage) {
  Model m(0);
  cast_model(m, ONNXC_DTYPE_STRING, ONNXC_DTYPE_FLOAT);
  ASSERT_EQ(m.run_strings({"0.47892547", "NaN", "INF", "+INF", "-inf", "1e3", "-2.5E-1"}), ONNXC_OK)
      << onnxc_session_last_error(m.session);
  onnxc_tensor out;
  ASSERT_EQ(onnxc_session_get_output(m.session, 0, &out), ONNXC_OK);
  const float *y = static_cast<const float *>(out.data);
  EXPECT_FLOAT_EQ(y[0], 0.47892547f);
  EXPECT_TRUE(std::isnan(y[1]));
  EXPECT_EQ(y[2], INFINITY);
  EXPECT_EQ(y[3], INFINITY);
  EXPECT_EQ(y[4], -INFINITY);
  EXPECT_EQ(y[5], 1000.0f);
  EXPECT_EQ(y[6], -0.25f);
  EXPECT_EQ(m.run_strings({"1.5", "one"}), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(onnxc_session_last_error(m.session), HasSubstr("element 1, \"one\", is not a number"));
  EXPECT_EQ(m.run_strings({""}), ONNXC_ERR_INVALID_ARGUMENT);
}

TEST(HostStrings, CastOfABoolToStringIsRefusedAtLoad) {
  Model m(0);
  m.tensors = {{"x", ONNXC_DTYPE_BOOL, ONNXC_TENSOR_INPUT, 1, m.dims_n.data(), -1, 0, 0, ONNXC_VALUE_TENSOR},
               {"y", ONNXC_DTYPE_STRING, ONNXC_TENSOR_OUTPUT, 1, m.dims_n.data(), -1, 0, 0, ONNXC_VALUE_TENSOR}};
  m.inputs = {0};
  m.outputs = {1};
  EXPECT_FALSE(m.load(ONNXC_HOST_STRING_CAST, {0, 1}, {}));
  EXPECT_THAT(onnxc_last_error(), HasSubstr("casts bool to string"));
}

// TfIdfVectorizer (mode 0 TF, 2 TFIDF): x int64 [n]; pool unigrams {2, 3}, bigrams {(5, 6), (7, 8)},
// n-grams at output columns `indexes`; y float [4]; max_skip_count 5.
std::vector<float> tfidf(int64_t mode, const std::vector<int64_t> &columns, const std::vector<float> &weights) {
  Model m(0);
  const int64_t pool[] = {2, 3, 5, 6, 7, 8}, counts[] = {0, 2};
  std::memcpy(m.weights, pool, sizeof pool);
  std::memcpy(m.weights + 64, counts, sizeof counts);
  std::memcpy(m.weights + 128, columns.data(), columns.size() * sizeof(int64_t));
  if (!weights.empty()) std::memcpy(m.weights + 192, weights.data(), weights.size() * sizeof(float));
  static int32_t d6 = 0, d2 = 0, d4 = 0, d0 = 0;
  auto konst = [&](int64_t v) {  // expr_start's last entry (the end) becomes the new expression's start
    m.expr_code.insert(m.expr_code.end(), {ONNXC_EXPR_CONST, v});
    m.expr_start.push_back(static_cast<uint32_t>(m.expr_code.size()));
    return static_cast<int32_t>(m.expr_start.size() - 2);
  };
  d6 = konst(6), d2 = konst(2), d4 = konst(4), d0 = konst(0);
  int32_t skip = konst(5);
  m.tensors = {{"x", ONNXC_DTYPE_INT64, ONNXC_TENSOR_INPUT, 1, m.dims_n.data(), -1, 0, 0, ONNXC_VALUE_TENSOR},
               {"pool", ONNXC_DTYPE_INT64, ONNXC_TENSOR_WEIGHT, 1, &d6, -1, 0, sizeof pool, ONNXC_VALUE_TENSOR},
               {"counts", ONNXC_DTYPE_INT64, ONNXC_TENSOR_WEIGHT, 1, &d2, -1, 64, sizeof counts, ONNXC_VALUE_TENSOR},
               {"indexes", ONNXC_DTYPE_INT64, ONNXC_TENSOR_WEIGHT, 1, &d4, -1, 128, 4 * sizeof(int64_t), ONNXC_VALUE_TENSOR},
               {"weights", ONNXC_DTYPE_FLOAT, ONNXC_TENSOR_WEIGHT, 1, weights.empty() ? &d0 : &d4, -1, 192,
                weights.size() * sizeof(float), ONNXC_VALUE_TENSOR},
               {"y", ONNXC_DTYPE_FLOAT, ONNXC_TENSOR_OUTPUT, 1, &d4, -1, 0, 0, ONNXC_VALUE_TENSOR}};
  m.inputs = {0};
  m.outputs = {5};
  // min 1, max 2, max_skip_count 5.
  EXPECT_TRUE(m.load(ONNXC_HOST_TFIDF, {0, 1, 2, 3, 4, 5, -(E_ONE + 1), -(E_TWO + 1), -(skip + 1), -((mode ? E_TWO : E_ZERO) + 1)}, {}))
      << onnxc_last_error();
  std::vector<int64_t> x = {2, 5, 7, 6, 8, 3, 2, 8};
  int64_t n = static_cast<int64_t>(x.size());
  onnxc_tensor in{ONNXC_DTYPE_INT64, 1, &n, x.data()}, out;
  EXPECT_EQ(onnxc_session_set_input(m.session, 0, &in), ONNXC_OK);
  EXPECT_EQ(onnxc_session_run(m.session), ONNXC_OK) << onnxc_session_last_error(m.session);
  if (onnxc_session_get_output(m.session, 0, &out) != ONNXC_OK) return {};
  const float *y = static_cast<const float *>(out.data);
  return std::vector<float>(y, y + 4);
}

TEST(HostTfIdf, CountsUnigramsAndSkipGrams) {
  // 2 twice, 3 once; (5, 6) at distance 2; (7, 8) at distances 2 and 5.
  EXPECT_EQ(tfidf(0, {0, 1, 2, 3}, {}), (std::vector<float>{2, 1, 1, 2}));
}

TEST(HostTfIdf, TfIdfWeighsPerOutputColumnAndSharedColumnsAddUp) {
  EXPECT_EQ(tfidf(2, {0, 1, 2, 3}, {0.5f, 2, 1, 3}), (std::vector<float>{1, 2, 1, 6}));
  // Unigram 3 and bigram (5, 6) share column 1: 1 + 1 occurrences, times its weight 2.
  EXPECT_EQ(tfidf(2, {0, 1, 1, 3}, {0.5f, 2, 1, 3}), (std::vector<float>{1, 4, 0, 6}));
}

// size: int32 scalar -> VALUE_SIZE binds symbol 0; y: int64 [that symbol] is shaped by it (no step writes
// y: a run of the one step shows the bound size).
// NonZero over strings: an element is non-zero when the string is not empty (numpy's rule), whatever
// its pointer.
TEST(HostStrings, NonZeroCountsNonEmptyStrings) {
  Model m(0);
  m.tensors = {{"x", ONNXC_DTYPE_STRING, ONNXC_TENSOR_INPUT, 1, m.dims_n.data(), -1, 0, 0, ONNXC_VALUE_TENSOR},
               {"y", ONNXC_DTYPE_INT64, ONNXC_TENSOR_OUTPUT, 2, m.dims_one_count.data(), -1, 0, 0, ONNXC_VALUE_TENSOR}};
  m.inputs = {0};
  m.outputs = {1};
  ASSERT_TRUE(m.load(ONNXC_HOST_NONZERO, {0, 1}, {1})) << onnxc_last_error();
  ASSERT_EQ(m.run_strings({"a", "", "bc", "", "0"}), ONNXC_OK) << onnxc_session_last_error(m.session);
  onnxc_tensor out;
  ASSERT_EQ(onnxc_session_get_output(m.session, 0, &out), ONNXC_OK);
  ASSERT_EQ(out.rank, 2);
  ASSERT_EQ(out.dims[1], 3);
  const int64_t *y = static_cast<const int64_t *>(out.data);
  EXPECT_EQ((std::vector<int64_t>(y, y + 3)), (std::vector<int64_t>{0, 2, 4}));
}

TEST(HostValueSize, BindsASymbolFromATensorsValue) {
  Model m(0);
  std::vector<int32_t> scalar_dims;
  m.tensors = {{"size", ONNXC_DTYPE_INT32, ONNXC_TENSOR_INPUT, 0, scalar_dims.data(), -1, 0, 0, ONNXC_VALUE_TENSOR},
               {"y", ONNXC_DTYPE_INT64, ONNXC_TENSOR_OUTPUT, 1, m.dims_n.data(), -1, 0, 0, ONNXC_VALUE_TENSOR}};
  m.symbols = {"value:size", "count"};  // count: in an expression no tensor uses
  m.inputs = {0};
  m.outputs = {1};
  ASSERT_TRUE(m.load(ONNXC_HOST_VALUE_SIZE, {0}, {0})) << onnxc_last_error();
  for (int32_t v : {7, 0, 3}) {
    onnxc_tensor in{ONNXC_DTYPE_INT32, 0, nullptr, &v};
    ASSERT_EQ(onnxc_session_set_input(m.session, 0, &in), ONNXC_OK);
    ASSERT_EQ(onnxc_session_run(m.session), ONNXC_OK) << onnxc_session_last_error(m.session);
    onnxc_tensor out;
    ASSERT_EQ(onnxc_session_get_output(m.session, 0, &out), ONNXC_OK);
    EXPECT_EQ(out.dims[0], v);
  }
  int32_t negative = -2;
  onnxc_tensor in{ONNXC_DTYPE_INT32, 0, nullptr, &negative};
  ASSERT_EQ(onnxc_session_set_input(m.session, 0, &in), ONNXC_OK);
  EXPECT_EQ(onnxc_session_run(m.session), ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(onnxc_session_last_error(m.session), HasSubstr("size 'size' is -2; a size cannot be negative"));
}

}  // namespace
