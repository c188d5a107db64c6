// onnxc.SymbolicShape: a shape (or one dim) computed from the model's symbolic dims. Shape
// simplification replaces a run-time shape subgraph (Shape -> Gather -> Mul -> Unsqueeze -> Concat)
// whose contents inference knows as dims, but which are not all constant, by one such node:
//
//   %s: i64[3] = onnxc.SymbolicShape(%src) {dims=["4*batch", "1", "seq"]}
//   %n: i64[] = onnxc.SymbolicShape(%x) {dims=["seq"], scalar=1}
//
// Format:
//   domain "onnxc", op_type "SymbolicShape", one output of dtype int64.
//   attribute dims (strings): one dim expression per element, in ir::Dim's canonical text
//     ("batch", "64", "batch*seq", "seq+past", "floordiv(seq,2)"); parse_dim() reads them back.
//   attribute scalar (int, optional): 1 = the output is a rank-0 tensor (dims has one entry);
//     absent or 0 = a rank-1 tensor with one element per entry of dims.
//   inputs: graph inputs (of this graph or an enclosing one) whose shapes carry every symbol the
//     expressions use, each as a whole dim. Only their shapes are read, never their data; they
//     keep the node's dependence on the symbols explicit (valid SSA, scheduled after the inputs
//     exist, never mistaken for a constant).
// Evaluation: bind each symbol from the dims of the inputs' actual shapes (bind_symbols), then
// evaluate each expression (evaluate_symbolic_shape). Codegen can instead emit the expressions
// directly, since the runtime knows every symbol once it has seen the model inputs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dim.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace onnxc::ir {

inline constexpr const char* kOnnxcDomain = "onnxc";
inline constexpr const char* kSymbolicShapeOp = "SymbolicShape";

bool is_symbolic_shape(const Node& n);
// The node's dims, parsed. InternalError if the attribute is missing or malformed.
std::vector<Dim> symbolic_shape_dims(const Node& n);
bool symbolic_shape_is_scalar(const Node& n);

// Inserts `onnxc.SymbolicShape` computing `dims` before `before` (nullptr = at the end) in `g`,
// with an output named from `name_hint`. Returns nullptr, adding nothing, when a dim contains an
// unknown (`?`) or a symbol that no graph input visible from `g` carries as a whole dim.
Node* insert_symbolic_shape(Graph& g, Node* before, const std::vector<Dim>& dims, bool scalar,
                            const std::string& name_hint);

// Symbol values from the node's inputs' actual dims (shapes[i] for input i); nullopt when an input
// shape contradicts its declared rank.
std::optional<std::map<std::string, int64_t>> bind_symbols(const Node& n,
                                                           const std::vector<std::vector<int64_t>>& shapes);
// The node's output for given symbol values; nullopt if a symbol is unbound.
std::optional<Tensor> evaluate_symbolic_shape(const Node& n, const std::map<std::string, int64_t>& symbols);

// Reads a dim's canonical text (Dim::str()) back: integers, symbols, + - *, parentheses,
// floordiv/ceildiv/mod/min/max(a,b) and "?" (a fresh unknown). nullopt on a syntax error.
std::optional<Dim> parse_dim(std::string_view text);

}  // namespace onnxc::ir
