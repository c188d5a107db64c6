// Shape expressions: evaluation (floor semantics, symbols), checked arithmetic errors, well-formedness
// checks and rendering.
#include <gtest/gtest.h>

#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include "onnxc/model_abi.h"
#include "shape_expr.h"

namespace {

// Builds a table from a list of RPN programs.
struct Exprs {
  std::vector<uint32_t> start{0};
  std::vector<int64_t> code;
  uint32_t n_symbols = 2;

  uint32_t add(std::vector<int64_t> program) {
    code.insert(code.end(), program.begin(), program.end());
    start.push_back(static_cast<uint32_t>(code.size()));
    return static_cast<uint32_t>(start.size() - 2);
  }
  onnxc_expr_table table() const {
    return {static_cast<uint32_t>(start.size() - 1), start.data(), code.data(), n_symbols};
  }
};

constexpr int64_t C = ONNXC_EXPR_CONST, S = ONNXC_EXPR_SYM;

onnxc_expr_result eval(std::vector<int64_t> program, int64_t *out, std::vector<int64_t> symbols = {0, 0}) {
  Exprs e;
  uint32_t id = e.add(std::move(program));
  onnxc_expr_table t = e.table();
  char why[128];
  EXPECT_TRUE(onnxc_expr_check(&t, id, why, sizeof why)) << why;
  return onnxc_expr_eval(&t, id, symbols.data(), out);
}

int64_t value(std::vector<int64_t> program, std::vector<int64_t> symbols = {0, 0}) {
  int64_t v = -999;
  EXPECT_EQ(eval(std::move(program), &v, std::move(symbols)), ONNXC_EXPR_RESULT_OK);
  return v;
}

std::string check_failure(std::vector<int64_t> program) {
  Exprs e;
  uint32_t id = e.add(std::move(program));
  onnxc_expr_table t = e.table();
  char why[128] = "";
  EXPECT_FALSE(onnxc_expr_check(&t, id, why, sizeof why));
  return why;
}

std::string render(std::vector<int64_t> program) {
  Exprs e;
  uint32_t id = e.add(std::move(program));
  onnxc_expr_table t = e.table();
  const char *names[] = {"batch", "seq"};
  char *text = onnxc_expr_render(&t, names, id);
  std::string s = text ? text : "(null)";
  std::free(text);
  return s;
}

TEST(ShapeExpr, ArithmeticAndSymbols) {
  EXPECT_EQ(value({C, 7}), 7);
  EXPECT_EQ(value({S, 0, S, 1, ONNXC_EXPR_MUL, C, 8, ONNXC_EXPR_MUL}, {3, 5}), 120);
  EXPECT_EQ(value({S, 1, C, 1, ONNXC_EXPR_ADD}, {3, 5}), 6);
  EXPECT_EQ(value({S, 1, C, 1, ONNXC_EXPR_SUB}, {3, 5}), 4);
  EXPECT_EQ(value({S, 0, S, 1, ONNXC_EXPR_MIN}, {3, 5}), 3);
  EXPECT_EQ(value({S, 0, S, 1, ONNXC_EXPR_MAX}, {3, 5}), 5);
  EXPECT_EQ(value({S, 0, ONNXC_EXPR_NEG}, {3, 5}), -3);
}

TEST(ShapeExpr, DivisionFloorsAndModTakesTheDivisorsSign) {
  EXPECT_EQ(value({C, 7, C, 2, ONNXC_EXPR_FLOORDIV}), 3);
  EXPECT_EQ(value({C, -7, C, 2, ONNXC_EXPR_FLOORDIV}), -4);
  EXPECT_EQ(value({C, 7, C, -2, ONNXC_EXPR_FLOORDIV}), -4);
  EXPECT_EQ(value({C, -7, C, -2, ONNXC_EXPR_FLOORDIV}), 3);
  EXPECT_EQ(value({C, 6, C, 2, ONNXC_EXPR_FLOORDIV}), 3);
  EXPECT_EQ(value({C, 7, C, 2, ONNXC_EXPR_CEILDIV}), 4);
  EXPECT_EQ(value({C, -7, C, 2, ONNXC_EXPR_CEILDIV}), -3);
  EXPECT_EQ(value({C, 6, C, 2, ONNXC_EXPR_CEILDIV}), 3);
  EXPECT_EQ(value({C, 7, C, 3, ONNXC_EXPR_MOD}), 1);
  EXPECT_EQ(value({C, -7, C, 3, ONNXC_EXPR_MOD}), 2);
  EXPECT_EQ(value({C, 7, C, -3, ONNXC_EXPR_MOD}), -2);
  EXPECT_EQ(value({C, INT64_MIN, C, -1, ONNXC_EXPR_MOD}), 0);
}

TEST(ShapeExpr, OverflowAndDivisionByZeroAreErrorsNotUndefinedBehaviour) {
  int64_t v = 42;
  EXPECT_EQ(eval({C, INT64_MAX, C, 1, ONNXC_EXPR_ADD}, &v), ONNXC_EXPR_RESULT_OVERFLOW);
  EXPECT_EQ(eval({C, INT64_MIN, C, 1, ONNXC_EXPR_SUB}, &v), ONNXC_EXPR_RESULT_OVERFLOW);
  EXPECT_EQ(eval({C, INT64_MAX / 2 + 1, C, 2, ONNXC_EXPR_MUL}, &v), ONNXC_EXPR_RESULT_OVERFLOW);
  EXPECT_EQ(eval({C, INT64_MIN, ONNXC_EXPR_NEG}, &v), ONNXC_EXPR_RESULT_OVERFLOW);
  EXPECT_EQ(eval({C, INT64_MIN, C, -1, ONNXC_EXPR_FLOORDIV}, &v), ONNXC_EXPR_RESULT_OVERFLOW);
  EXPECT_EQ(eval({C, INT64_MIN, C, -1, ONNXC_EXPR_CEILDIV}, &v), ONNXC_EXPR_RESULT_OVERFLOW);
  EXPECT_EQ(eval({C, 1, C, 0, ONNXC_EXPR_FLOORDIV}, &v), ONNXC_EXPR_RESULT_DIVISION_BY_ZERO);
  EXPECT_EQ(eval({C, 1, C, 0, ONNXC_EXPR_CEILDIV}, &v), ONNXC_EXPR_RESULT_DIVISION_BY_ZERO);
  EXPECT_EQ(eval({S, 0, S, 1, ONNXC_EXPR_MOD}, &v, {5, 0}), ONNXC_EXPR_RESULT_DIVISION_BY_ZERO);
  EXPECT_EQ(v, 42) << "the output is untouched on error";
  EXPECT_STREQ(onnxc_expr_result_string(ONNXC_EXPR_RESULT_DIVISION_BY_ZERO), "division by zero");
}

TEST(ShapeExpr, MalformedProgramsAreRejectedWithAReason) {
  EXPECT_EQ(check_failure({}), "is empty");
  EXPECT_EQ(check_failure({C, 1, ONNXC_EXPR_ADD}), "pops an empty stack at word 2");
  EXPECT_EQ(check_failure({C, 1, C, 2}), "leaves 2 values on the stack instead of 1");
  EXPECT_EQ(check_failure({C}), "ends inside the immediate of word 0");
  EXPECT_EQ(check_failure({S, 2}), "names symbol 2 but the model has 2");
  EXPECT_EQ(check_failure({S, -1}), "names symbol -1 but the model has 2");
  EXPECT_EQ(check_failure({C, 1, 99}), "has unknown opcode 99 at word 2");
  std::vector<int64_t> deep;
  for (int i = 0; i <= ONNXC_EXPR_MAX_DEPTH; i++) deep.insert(deep.end(), {C, 1});
  for (int i = 0; i < ONNXC_EXPR_MAX_DEPTH; i++) deep.push_back(ONNXC_EXPR_ADD);
  EXPECT_EQ(check_failure(deep), "needs a stack deeper than 64");
}

TEST(ShapeExpr, EvaluatingAnUncheckedMalformedProgramIsAnErrorToo) {
  Exprs e;
  uint32_t id = e.add({C, 1, ONNXC_EXPR_ADD});
  onnxc_expr_table t = e.table();
  int64_t v;
  EXPECT_EQ(onnxc_expr_eval(&t, id, nullptr, &v), ONNXC_EXPR_RESULT_MALFORMED);
  EXPECT_EQ(onnxc_expr_eval(&t, id + 1, nullptr, &v), ONNXC_EXPR_RESULT_MALFORMED);
}

TEST(ShapeExpr, ClassifiesPlainConstantsAndSymbols) {
  Exprs e;
  uint32_t k = e.add({C, 64}), s = e.add({S, 1}), both = e.add({S, 1, C, 1, ONNXC_EXPR_ADD});
  onnxc_expr_table t = e.table();
  int64_t v = 0;
  uint32_t y = 0;
  EXPECT_TRUE(onnxc_expr_is_const(&t, k, &v));
  EXPECT_EQ(v, 64);
  EXPECT_FALSE(onnxc_expr_is_symbol(&t, k, &y));
  EXPECT_TRUE(onnxc_expr_is_symbol(&t, s, &y));
  EXPECT_EQ(y, 1u);
  EXPECT_FALSE(onnxc_expr_is_const(&t, both, &v));
  EXPECT_FALSE(onnxc_expr_is_symbol(&t, both, &y));
}

TEST(ShapeExpr, RendersInfixWithMinimalParentheses) {
  EXPECT_EQ(render({S, 0}), "batch");
  EXPECT_EQ(render({C, -3}), "-3");
  EXPECT_EQ(render({S, 1, C, 1, ONNXC_EXPR_ADD}), "seq + 1");
  EXPECT_EQ(render({S, 0, S, 1, ONNXC_EXPR_MUL, C, 8, ONNXC_EXPR_MUL}), "batch * seq * 8");
  EXPECT_EQ(render({S, 0, S, 1, ONNXC_EXPR_ADD, C, 8, ONNXC_EXPR_MUL}), "(batch + seq) * 8");
  EXPECT_EQ(render({S, 0, S, 1, C, 1, ONNXC_EXPR_SUB, ONNXC_EXPR_SUB}), "batch - (seq - 1)");
  EXPECT_EQ(render({S, 1, C, 2, ONNXC_EXPR_FLOORDIV}), "floor(seq / 2)");
  EXPECT_EQ(render({S, 1, C, 2, ONNXC_EXPR_CEILDIV}), "ceil(seq / 2)");
  EXPECT_EQ(render({C, 8, S, 1, C, 3, ONNXC_EXPR_SUB, ONNXC_EXPR_FLOORDIV}), "floor(8 / (seq - 3))");
  EXPECT_EQ(render({S, 0, S, 1, ONNXC_EXPR_MUL, C, 2, ONNXC_EXPR_CEILDIV}), "ceil(batch * seq / 2)");
  EXPECT_EQ(render({S, 0, S, 1, C, 2, ONNXC_EXPR_MUL, ONNXC_EXPR_FLOORDIV}), "floor(batch / (seq * 2))");
  EXPECT_EQ(render({S, 1, C, 1, ONNXC_EXPR_SUB, C, 0, ONNXC_EXPR_MAX}), "max(seq - 1, 0)");
  EXPECT_EQ(render({S, 1, C, 4, ONNXC_EXPR_MOD}), "seq % 4");
  EXPECT_EQ(render({S, 0, S, 1, ONNXC_EXPR_ADD, ONNXC_EXPR_NEG}), "-(batch + seq)");
}

}  // namespace
