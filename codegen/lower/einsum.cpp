// Einsum: explicit ("ij,jk->ik") and implicit ("ij,jk", output = letters seen once, sorted)
// equations, repeated letters within an operand (diagonals), and "..." (broadcast batch dims). A
// direct contraction: the output letters index the output, the others form one RDom; the product of
// the operands is summed over it. Correct for every equation, not a tuned GEMM.
#include <map>
#include <set>

#include "codegen/lower/lower_util.h"
#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;
using Halide::Func;

std::string strip(const std::string& s) {
  std::string r;
  for (char c : s)
    if (c != ' ') r += c;
  return r;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts(1);
  for (char c : s) {
    if (c == sep) parts.emplace_back();
    else parts.back() += c;
  }
  return parts;
}

// Ellipsis dims are named by digits '0'.. (outermost first) so they behave like letters.
std::string expand_ellipsis(const std::string& term, int rank, int ell_rank) {
  size_t p = term.find("...");
  if (p == std::string::npos) return term;
  int n = rank - static_cast<int>(term.size() - 3);  // dims this operand's "..." covers
  std::string dims;
  for (int k = ell_rank - n; k < ell_rank; ++k) dims += static_cast<char>('0' + k);
  return term.substr(0, p) + dims + term.substr(p + 3);
}

std::vector<HTensor> einsum(LowerContext& ctx) {
  std::string eq = strip(ctx.node.attr_string("equation", ""));
  auto arrow = eq.find("->");
  std::vector<std::string> terms = split(arrow == std::string::npos ? eq : eq.substr(0, arrow), ',');
  user_check(terms.size() == ctx.in.size()) << ctx.node.describe() << ": equation '" << eq << "' has "
                                            << terms.size() << " operands for " << ctx.in.size() << " inputs";
  int ell_rank = 0;
  for (size_t i = 0; i < terms.size(); ++i)
    if (terms[i].find("...") != std::string::npos)
      ell_rank = std::max(ell_rank, ctx.in[i].rank() - static_cast<int>(terms[i].size() - 3));
  std::map<char, int> count;
  std::map<char, Expr> extent;  // from the first operand where the letter is not a broadcast 1
  for (size_t i = 0; i < terms.size(); ++i) {
    terms[i] = expand_ellipsis(terms[i], ctx.in[i].rank(), ell_rank);
    user_check(static_cast<int>(terms[i].size()) == ctx.in[i].rank())
        << ctx.node.describe() << ": operand " << i << " '" << terms[i] << "' does not match rank " << ctx.in[i].rank();
    for (size_t k = 0; k < terms[i].size(); ++k) {
      char c = terms[i][k];
      ++count[c];
      const Expr& e = ctx.in[i].shape[k];
      if (!extent.count(c) || Halide::Internal::is_const_one(extent[c])) extent[c] = e;
    }
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = expand_ellipsis(eq.substr(arrow + 2), static_cast<int>(out_shape(ctx).size()), ell_rank);
  } else {
    for (int k = 0; k < ell_rank; ++k) out += static_cast<char>('0' + k);
    for (const auto& [c, n] : count)
      if (n == 1 && !(c >= '0' && c <= '9')) out += c;
  }
  std::string summed;
  for (const auto& [c, n] : count)
    if (out.find(c) == std::string::npos) summed += c;

  const auto& shape = out_shape(ctx);
  Halide::Type at = accumulator_type(halide_type(out_dtype(ctx)));
  auto vars = make_vars(static_cast<int>(out.size()));
  Index o = onnx_index(vars);
  std::map<char, Expr> index;
  for (size_t k = 0; k < out.size(); ++k) index[out[k]] = o[k];
  Halide::RDom r;
  if (!summed.empty()) {
    std::vector<Halide::Range> ranges;
    for (char c : summed) ranges.emplace_back(0, extent[c]);
    r = Halide::RDom(Halide::Region(ranges.begin(), ranges.end()));
    for (size_t k = 0; k < summed.size(); ++k) index[summed[k]] = r[static_cast<int>(k)];
  }
  Expr prod = Halide::Internal::make_one(at);
  for (size_t i = 0; i < terms.size(); ++i) {
    Index idx;
    for (size_t k = 0; k < terms[i].size(); ++k)
      idx.push_back(Halide::Internal::is_const_one(ctx.in[i].shape[k]) ? Expr(0) : index[terms[i][k]]);
    prod = prod * Halide::cast(at, ctx.in[i].at(idx));
  }
  std::vector<Expr> args(vars.begin(), vars.end());
  Func acc("einsum_acc"), y("einsum");
  if (summed.empty()) {
    acc(args) = prod;
  } else {
    acc(args) = Halide::Internal::make_zero(at);
    acc(args) += prod;
    ctx.reassociable.push_back(acc);  // a contraction: its sum order is ours to pick
  }
  y(args) = Halide::cast(halide_type(out_dtype(ctx)), acc(args));
  ctx.schedule = [acc](Func output, const Halide::Target& t) {
    Func a = acc;
    a.compute_root();
    schedule_reduction(a, true, worth_parallel(output), t);
    schedule_output(output, KernelClass::Elementwise, t);
  };
  HTensor h;
  h.func = y;
  h.shape = shape;
  h.dtype = out_dtype(ctx);
  return {h};
}

Registrar reg_Einsum("", "Einsum", KernelClass::Other, einsum);

}  // namespace

}  // namespace onnxc::codegen
