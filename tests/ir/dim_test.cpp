// Symbolic dims: canonical form, arithmetic, simplification.
#include <gtest/gtest.h>

#include "ir/dim.h"

namespace onnxc::ir {
namespace {

const Dim batch = Dim::symbol("batch"), seq = Dim::symbol("seq"), past = Dim::symbol("past");

TEST(Dim, ConstantsFold) {
  EXPECT_EQ((Dim(3) + Dim(4)).str(), "7");
  EXPECT_EQ((Dim(3) * Dim(4)).value(), 12);
  EXPECT_EQ(floordiv(Dim(-7), Dim(2)).value(), -4);
  EXPECT_EQ(ceildiv(Dim(7), Dim(2)).value(), 4);
  EXPECT_EQ(mod(Dim(-7), Dim(3)).value(), 2);
}

TEST(Dim, CanonicalPolynomial) {
  EXPECT_EQ(batch * seq, seq * batch);
  EXPECT_EQ((batch * seq).str(), "batch*seq");
  EXPECT_EQ(((seq + past) * 2).str(), "2*past+2*seq");
  EXPECT_EQ(seq + past, past + seq);
  EXPECT_EQ((seq - past).str(), "seq-past");
  EXPECT_EQ((seq + 1 - 1), seq);
  EXPECT_EQ((seq - seq).value(), 0);
  EXPECT_EQ((batch * (seq + 1)).str(), "batch+batch*seq");
}

TEST(Dim, ExactDivisionSimplifies) {
  EXPECT_EQ(floordiv(seq * 64, Dim(64)), seq);
  EXPECT_EQ(floordiv(batch * seq * 64, batch * 64), seq);
  EXPECT_EQ(floordiv(batch * seq * 64 + batch * past * 64, batch * 64), seq + past);
  EXPECT_EQ(mod(batch * seq * 4, seq * 2).value(), 0);
  EXPECT_EQ(floordiv(seq, Dim(2)).str(), "floordiv(seq,2)");
  EXPECT_EQ(floordiv(seq + 1, seq).str(), "floordiv(seq+1,seq)");  // not exact: stays an atom
}

TEST(Dim, MinMaxUseNonNegativeSymbols) {
  EXPECT_EQ(min(seq, seq + 1), seq);
  EXPECT_EQ(max(seq, seq + past), seq + past);
  EXPECT_EQ(max(seq, Dim(0)), seq);
  EXPECT_EQ(min(Dim(0), seq).value(), 0);
  EXPECT_EQ(max(seq - 1, Dim(0)).str(), "max(0,seq-1)");  // seq may be 0
  EXPECT_EQ(min(seq, Dim(4)), min(Dim(4), seq));
}

TEST(Dim, KnownNonNegative) {
  EXPECT_TRUE(known_nonnegative(seq * batch + 3));
  EXPECT_TRUE(known_nonnegative(floordiv(seq, Dim(2))));
  EXPECT_FALSE(known_nonnegative(seq - 1));
  EXPECT_TRUE(known_nonnegative(max(seq - 1, Dim(0))));
}

TEST(Dim, UnknownsAreDistinct) {
  Dim a = Dim::unknown(), b = Dim::unknown();
  EXPECT_NE(a, b);
  EXPECT_EQ(a.str(), "?");
  EXPECT_TRUE(a.is_unknown());
  EXPECT_TRUE((a * 64).has_unknown());
  EXPECT_FALSE((seq * 64).has_unknown());
  EXPECT_EQ(floordiv(a * 64, a), Dim(64));  // the same unknown cancels
}

TEST(Dim, EvaluateAndSubstitute) {
  Dim e = floordiv(seq + past, Dim(2)) * batch;
  auto v = e.evaluate([](const std::string& s) -> std::optional<int64_t> {
    if (s == "seq") return 5;
    if (s == "past") return 3;
    if (s == "batch") return 2;
    return std::nullopt;
  });
  EXPECT_EQ(v, 8);
  EXPECT_EQ(e.substitute({{"past", Dim(1)}, {"seq", Dim(7)}}), batch * 4);
}

TEST(Dim, ShapeHelpers) {
  Shape s{batch, seq, 64};
  EXPECT_EQ(shape_str(s), "[batch,seq,64]");
  EXPECT_EQ(shape_numel(s), batch * seq * 64);
  EXPECT_FALSE(shape_is_static(s));
  EXPECT_EQ(shape_as_ints(Shape{2, 3}), (std::vector<int64_t>{2, 3}));
}

}  // namespace
}  // namespace onnxc::ir
