// Host ops on hand-written descriptors through the public API: string tensors (StringNormalizer,
// StringConcat, StringSplit, RegexFullMatch, Equal, Cast to and from strings; the element is a const char *), TfIdfVectorizer
// and sizes given as data
// (VALUE_SIZE). No kernels: these steps run in the runtime's C.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "desc_builder.h"
#include "onnxc/runtime.h"

namespace {

using ::testing::HasSubstr;

// Expressions: n (symbol 0, an input dim), count (symbol 1, bound by the step), then constants.
enum { E_N, E_COUNT, E_ZERO, E_ONE, E_TWO, E_THREE, E_BYTES };
constexpr int32_t STR = ONNXC_DTYPE_STRING;

// One host step over the tensors a test adds to `b`, loaded with one session.
struct Model {
  DescBuilder b{"strings"};
  alignas(64) uint8_t weights[256] = {};
  onnxc_model *model = nullptr;
  onnxc_session *session = nullptr;

  // weight_bytes: the constant E_BYTES (a weight's size); symbol0: symbol 0's name.
  explicit Model(int64_t weight_bytes, const char *symbol0 = "n") {
    b.symbol(symbol0);
    b.symbol("count");
    for (int64_t v : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{3}, weight_bytes}) b.constant(v);
    b.d.weights = weights;
    b.d.weights_size = sizeof weights;
  }
  ~Model() {
    onnxc_session_free(session);
    onnxc_model_free(model);
  }

  // One host step `op` over args; binds `binds` (or nothing).
  bool load(int32_t op, const std::vector<int32_t> &args, const std::vector<int32_t> &binds) {
    b.host(op, args, binds);
    if (onnxc_model_from_desc(b.get(), &model) != ONNXC_OK) return false;
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
  int32_t x = m.b.input("x", STR, {E_N}), words = m.b.weight("stopwords", ONNXC_DTYPE_UINT8, {E_BYTES}, 0, at ? at : 1);
  int32_t y = m.b.output("y", STR, {E_COUNT});
  auto small = [](size_t v) { return v == 0 ? E_ZERO : v == 1 ? E_ONE : v == 2 ? E_TWO : E_THREE; };
  int32_t change = small(static_cast<size_t>(case_change)), count = small(stopwords.size());
  ASSERT_TRUE(m.load(ONNXC_HOST_STRING_NORMALIZER,
                     {x, words, y, DescBuilder::scalar(change), DescBuilder::scalar(case_sensitive ? E_ONE : E_ZERO),
                      DescBuilder::scalar(count)},
                     {1}))
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
  int32_t a = m.b.input("a", STR, {E_N}), b = m.b.input("b", STR, {E_COUNT}), y = m.b.output("y", STR, {E_N});
  ASSERT_TRUE(m.load(ONNXC_HOST_STRING_CONCAT, {a, b, y}, {})) << onnxc_last_error();
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
  int32_t a = m.b.input("a", STR, {E_N}), b = m.b.input("b", ONNXC_DTYPE_FLOAT, {E_N}), y = m.b.output("y", STR, {E_N});
  EXPECT_FALSE(m.load(ONNXC_HOST_STRING_CONCAT, {a, b, y}, {}));
  EXPECT_STREQ(onnxc_last_error(), "model 'strings': step 0 (StringConcat): A, B and Y must be strings");
}

// a [n] == b [count] -> y bool [n], b broadcasting when count is 1.
TEST(HostStrings, EqualComparesBytesAndBroadcasts) {
  Model m(0);
  int32_t a = m.b.input("a", STR, {E_N}), b = m.b.input("b", STR, {E_COUNT});
  int32_t y = m.b.output("y", ONNXC_DTYPE_BOOL, {E_N});
  ASSERT_TRUE(m.load(ONNXC_HOST_STRING_EQUAL, {a, b, y}, {})) << onnxc_last_error();
  auto bools = [&] {
    onnxc_tensor out;
    EXPECT_EQ(onnxc_session_get_output(m.session, 0, &out), ONNXC_OK);
    const uint8_t *v = static_cast<const uint8_t *>(out.data);
    return std::vector<int>(v, v + out.dims[0]);
  };
  ASSERT_EQ(run_concat(m, {"string1", "string2", "", "caf\xc3\xa9"}, {"string1", "string3", "", "cafe"}), ONNXC_OK)
      << onnxc_session_last_error(m.session);
  EXPECT_EQ(bools(), (std::vector<int>{1, 0, 1, 0}));
  ASSERT_EQ(run_concat(m, {"x", "xy", "X"}, {"x"}), ONNXC_OK) << onnxc_session_last_error(m.session);
  EXPECT_EQ(bools(), (std::vector<int>{1, 0, 0}));
  EXPECT_EQ(run_concat(m, {"a", "b"}, {"c", "d", "e"}), ONNXC_ERR_SHAPE_MISMATCH);
  EXPECT_THAT(onnxc_session_last_error(m.session), HasSubstr("step 0 (Equal): 'a' dim 0 is 2 and 'b' dim 0 is 3"));
}

TEST(HostStrings, EqualChecksDtypesAtLoad) {
  Model m(0);
  int32_t a = m.b.input("a", STR, {E_N}), b = m.b.input("b", STR, {E_N}), y = m.b.output("y", STR, {E_N});
  EXPECT_FALSE(m.load(ONNXC_HOST_STRING_EQUAL, {a, b, y}, {}));
  EXPECT_STREQ(onnxc_last_error(), "model 'strings': step 0 (Equal): A and B must be strings, Y bool");
}

// x [n] of `from` -> Cast -> y [n] of `to`.
void cast_model(Model &m, int32_t from, int32_t to) {
  int32_t x = m.b.input("x", from, {E_N}), y = m.b.output("y", to, {E_N});
  ASSERT_TRUE(m.load(ONNXC_HOST_STRING_CAST, {x, y}, {})) << onnxc_last_error();
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
  int32_t x = m.b.input("x", ONNXC_DTYPE_BOOL, {E_N}), y = m.b.output("y", STR, {E_N});
  EXPECT_FALSE(m.load(ONNXC_HOST_STRING_CAST, {x, y}, {}));
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
  int32_t d6 = m.b.constant(6), d4 = m.b.constant(4), skip = m.b.constant(5);
  constexpr int32_t I64 = ONNXC_DTYPE_INT64;
  int32_t x_id = m.b.input("x", I64, {E_N}), pool_id = m.b.weight("pool", I64, {d6}, 0, sizeof pool);
  int32_t counts_id = m.b.weight("counts", I64, {E_TWO}, 64, sizeof counts);
  int32_t indexes_id = m.b.weight("indexes", I64, {d4}, 128, 4 * sizeof(int64_t));
  int32_t weights_id = m.b.weight("weights", ONNXC_DTYPE_FLOAT, {weights.empty() ? E_ZERO : d4}, 192, weights.size() * sizeof(float));
  int32_t y_id = m.b.output("y", ONNXC_DTYPE_FLOAT, {d4});
  // min 1, max 2, max_skip_count 5.
  EXPECT_TRUE(m.load(ONNXC_HOST_TFIDF,
                     {x_id, pool_id, counts_id, indexes_id, weights_id, y_id, DescBuilder::scalar(E_ONE),
                      DescBuilder::scalar(E_TWO), DescBuilder::scalar(skip), DescBuilder::scalar(mode ? E_TWO : E_ZERO)},
                     {}))
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
  int32_t x = m.b.input("x", STR, {E_N}), nonzero = m.b.output("y", ONNXC_DTYPE_INT64, {E_ONE, E_COUNT});
  ASSERT_TRUE(m.load(ONNXC_HOST_NONZERO, {x, nonzero}, {1})) << onnxc_last_error();
  ASSERT_EQ(m.run_strings({"a", "", "bc", "", "0"}), ONNXC_OK) << onnxc_session_last_error(m.session);
  onnxc_tensor out;
  ASSERT_EQ(onnxc_session_get_output(m.session, 0, &out), ONNXC_OK);
  ASSERT_EQ(out.rank, 2);
  ASSERT_EQ(out.dims[1], 3);
  const int64_t *y = static_cast<const int64_t *>(out.data);
  EXPECT_EQ((std::vector<int64_t>(y, y + 3)), (std::vector<int64_t>{0, 2, 4}));
}

TEST(HostValueSize, BindsASymbolFromATensorsValue) {
  Model m(0, "value:size");  // count: in an expression no tensor uses
  m.b.input("size", ONNXC_DTYPE_INT32, {});
  m.b.output("y", ONNXC_DTYPE_INT64, {E_N});
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

// x [n] -> StringSplit(delimiter, maxsplit) -> parts [n, count], counts [n].
void split_model(Model &m, const std::string &delim, int32_t maxsplit_expr, bool whitespace) {
  std::memcpy(m.weights, delim.c_str(), delim.size() + 1);
  int32_t x = m.b.input("x", STR, {E_N}), d = m.b.weight("delimiter", ONNXC_DTYPE_UINT8, {E_BYTES}, 0, delim.size() + 1);
  int32_t y = m.b.output("parts", STR, {E_N, E_COUNT}), z = m.b.output("counts", ONNXC_DTYPE_INT64, {E_N});
  ASSERT_TRUE(m.load(ONNXC_HOST_STRING_SPLIT,
                     {x, d, y, z, DescBuilder::scalar(maxsplit_expr), DescBuilder::scalar(whitespace ? E_ONE : E_ZERO)},
                     {1}))
      << onnxc_last_error();
}

std::vector<int64_t> counts_output(Model &m) {
  onnxc_tensor out;
  EXPECT_EQ(onnxc_session_get_output(m.session, 1, &out), ONNXC_OK);
  const int64_t *p = static_cast<const int64_t *>(out.data);
  return std::vector<int64_t>(p, p + out.dims[0]);
}

TEST(HostStrings, SplitAsPythonDoes) {
  {
    Model m(2);
    m.b.constant(-1);  // the expression after E_BYTES: maxsplit -1 (no limit)
    split_model(m, "-", E_BYTES + 1, false);
    ASSERT_EQ(m.run_strings({"o-n--x-", "ab", ""}), ONNXC_OK) << onnxc_session_last_error(m.session);
    EXPECT_EQ(m.string_output(),
              (std::vector<std::string>{"o", "n", "", "x", "", "ab", "", "", "", "", "", "", "", "", ""}));
    EXPECT_EQ(counts_output(m), (std::vector<int64_t>{5, 1, 1}));
  }
  {
    Model m(1);
    split_model(m, "", E_TWO, true);  // whitespace runs, at most two splits
    ASSERT_EQ(m.run_strings({"  o n  n x ", "the quick", "   "}), ONNXC_OK) << onnxc_session_last_error(m.session);
    EXPECT_EQ(m.string_output(), (std::vector<std::string>{"o", "n", "n x ", "the", "quick", "", "", "", ""}));
    EXPECT_EQ(counts_output(m), (std::vector<int64_t>{3, 2, 0}));
  }
}

// x [n] -> RegexFullMatch(pattern) -> y bool [n]; the pattern is RE2 text.
std::vector<bool> full_match(const std::string &pattern, const std::vector<const char *> &x) {
  Model m(static_cast<int64_t>(pattern.size()) + 1);
  std::memcpy(m.weights, pattern.c_str(), pattern.size() + 1);
  int32_t in = m.b.input("x", STR, {E_N}), p = m.b.weight("pattern", ONNXC_DTYPE_UINT8, {E_BYTES}, 0, pattern.size() + 1);
  int32_t y = m.b.output("y", ONNXC_DTYPE_BOOL, {E_N});
  EXPECT_TRUE(m.load(ONNXC_HOST_REGEX_FULL_MATCH, {in, p, y}, {})) << onnxc_last_error();
  EXPECT_EQ(m.run_strings(x), ONNXC_OK) << onnxc_session_last_error(m.session);
  onnxc_tensor out;
  EXPECT_EQ(onnxc_session_get_output(m.session, 0, &out), ONNXC_OK);
  const uint8_t *b = static_cast<const uint8_t *>(out.data);
  return std::vector<bool>(b, b + x.size());
}

TEST(HostStrings, RegexFullMatchTranslatesRe2Classes) {
  EXPECT_EQ(full_match("www\\.[\\w.-]+\\.\\bcom\\b", {"www.google.com", "www.bbc.co.uk", "xwww.a.com"}),
            (std::vector<bool>{true, false, false}));
  EXPECT_EQ(full_match("[\\w.\\-]{0,25}@(yahoo|gmail)\\.com", {"a-b.c@gmail.com", "a@hotmail.com", "a@gmail.com!"}),
            (std::vector<bool>{true, false, false}));
  EXPECT_EQ(full_match("\\d+\\s\\d", {"12 3", "12x3"}), (std::vector<bool>{true, false}));
}

}  // namespace
