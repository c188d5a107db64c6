// The contract between kernel emission and the op-family lowering files: a lowering turns one IR
// node into Halide Funcs over symbolic extents. Lowerings are registered once, in a table keyed as the
// op table is (ir::OpKey and an ir::OpsetRange, ir/op_registry.h; tests/codegen/op_table_test.cpp checks the
// ranges against it); each op family lives in its own file (elementwise.cpp, reduce.cpp, matmul.cpp...).
#pragma once

#include <Halide.h>

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/op_registry.h"

namespace onnxc::codegen {

// A tensor inside a Halide pipeline. `func` takes its arguments in Halide order (innermost first:
// argument 0 is the tensor's last ONNX axis); `shape` lists extents in ONNX order (outermost first).
struct HTensor {
  Halide::Func func;
  std::vector<Halide::Expr> shape;
  ir::DType dtype = ir::DType::Undefined;

  int rank() const { return static_cast<int>(shape.size()); }
  bool defined() const { return func.defined(); }
  // Element at an ONNX-order index.
  Halide::Expr at(const std::vector<Halide::Expr>& onnx_index) const;
};

// The Halide type used to hold an ONNX dtype inside kernels. Bool is Halide's Bool() (UInt(1)), which
// Halide stores one byte per element: the runtime passes bool tensors as uint1 buffers.
Halide::Type halide_type(ir::DType t);

// Kernel classes pick schedules; emission schedules the kernel's root by class unless the lowering
// scheduled it itself.
enum class KernelClass { Elementwise, Reduction, MatMul, Softmax, Norm, Attention, DataMovement, Other };

// The constant data of a node's inputs (nullptr where an input is computed at run time). Reading
// one through operator[] marks it: its values may shape the kernel's code, so they key the kernel
// cache. data(i) reads without marking, for values that only become kernel data (a weight repacked
// through add_constant): kernels that differ only in such weights, like a transformer's layers,
// then share one compiled function.
class ConstInputs {
 public:
  ConstInputs() = default;
  ConstInputs(std::vector<const ir::Tensor*> t) : t_(std::move(t)), read_(t_.size(), false) {}  // NOLINT: implicit
  void push_back(const ir::Tensor* t) {
    t_.push_back(t);
    read_.push_back(false);
  }
  void assign(size_t n, const ir::Tensor* t) {
    t_.assign(n, t);
    read_.assign(n, false);
  }
  size_t size() const { return t_.size(); }
  const ir::Tensor* operator[](size_t i) const {
    read_.at(i) = true;
    return t_[i];
  }
  const ir::Tensor* data(size_t i) const { return i < t_.size() ? t_[i] : nullptr; }
  bool read(size_t i) const { return read_.at(i); }

 private:
  std::vector<const ir::Tensor*> t_;
  mutable std::vector<bool> read_;
};

struct LowerContext {
  const ir::Node& node;
  std::vector<HTensor> in;                         // aligned with node inputs; undefined when omitted
  ConstInputs const_in;                            // constant data of input i, or nullptr
  std::vector<std::vector<Halide::Expr>> out_shape;  // inferred output extents, ONNX order
  Halide::Target target;
  int64_t opset = 0;                               // opset of the node's domain
  // Converts a symbolic dim to a Halide Expr (symbols become scalar kernel parameters).
  std::function<Halide::Expr(const ir::Dim&)> dim_expr;
  // Adds a compile-time constant (e.g. weights repacked into GEMM panels) as a kernel input and
  // returns it as a tensor; the bytes are stored with the model's weights.
  std::function<HTensor(const std::string& hint, ir::Tensor)> add_constant;
  // Set by a lowering that scheduled its own Funcs; run by emission after the pipeline is built,
  // with the Func that is realized as the kernel output (compute_root on it is already done).
  std::function<void(Halide::Func output, const Halide::Target&)> schedule;
  KernelClass kclass = KernelClass::Elementwise;
  // Contraction accumulators (a MatMul's or Conv's sum of products) that may be reassociated and
  // contracted to FMAs. Every other float value in a kernel keeps IEEE semantics (strict_float).
  std::vector<Halide::Func> reassociable;
  // Preconditions on the kernel's parameters alone (extents, symbols, scalar arguments; no Func,
  // no Var), each with its error message: checked once before the kernel's loops, on the host. A
  // Halide::require inside a computed value is checked per element, and inside a GPU kernel it
  // cannot be compiled at all (device code has no error printing); use it only for data-dependent
  // checks on CPU kernels.
  std::vector<std::pair<Halide::Expr, std::string>> requirements;
  // Set by a lowering whose values hold a Halide::require on tensor data: a GPU kernel cannot
  // report it (device code has no error path), so on GPU targets the kernel runs on the host CPU.
  bool checks_data = false;
  // Conditions on the kernel's parameters under which an input the lowering reads has no elements
  // and is skipped (a Concat part of run-time length 0). Halide bounds-checks a read of an empty
  // input even where a select skips it, so outputs with the default schedule are specialized on
  // each condition (KernelBuilder), where the guarded read folds away.
  std::vector<Halide::Expr> empty_reads;
  // How many more such conditions the kernel specializes on (each doubles its loop nests; set by
  // KernelBuilder from kMaxEmptyReads and the nodes lowered before). A lowering with more parts that
  // may be empty reads them another way.
  size_t empty_reads_left = 0;
};

using LowerFn = std::function<std::vector<HTensor>(LowerContext&)>;

struct OpLowering {
  std::string domain;   // "" for ai.onnx
  std::string op_type;
  ir::OpsetRange range;  // the opsets this lowering implements (ctx.opset tells forms apart inside)
  KernelClass kclass;
  LowerFn fn;
};

// Registration happens through static Registrar objects in each op-family file.
void register_lowering(OpLowering l);
// The lowering of the op at `opset` of its domain; nullptr when none covers that version.
const OpLowering* find_lowering(const std::string& domain, const std::string& op_type, int64_t opset);
// The same for a node; a UserError naming the node, the op and the opset (and the versions that
// are lowered, if any) when there is none.
const OpLowering& lowering_for(const ir::Node& n, int64_t opset);
std::vector<const OpLowering*> all_lowerings();
// The opset ranges of the op's lowerings ("1-12, 13-latest"); empty when it has none.
std::string lowered_opsets(const std::string& domain, const std::string& op_type);

struct Registrar {
  // Every opset of the op.
  Registrar(std::string domain, std::string op, KernelClass k, LowerFn fn)
      : Registrar(std::move(domain), std::move(op), ir::OpsetRange{}, k, std::move(fn)) {}
  Registrar(std::string domain, std::string op, ir::OpsetRange range, KernelClass k, LowerFn fn) {
    register_lowering({std::move(domain), std::move(op), range, k, std::move(fn)});
  }
};

}  // namespace onnxc::codegen
