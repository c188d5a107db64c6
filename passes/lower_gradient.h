// Gradient (ai.onnx.preview.training): the derivative of a value with respect to graph values,
// written out as ordinary ops by reverse-mode differentiation of the forward nodes.
#pragma once

#include "ir/graph.h"

namespace onnxc::passes {

// Rewrites `dxs = Gradient(xs...) {xs, y}` (seed dy = 1 everywhere) into the nodes that compute
// each dy/dx from the forward values: adjoints are propagated from y back through the nodes
// between the xs and y, in reverse order, and summed where a value is used more than once. Ops
// differentiated: Add, Sub, Mul, Div, Neg, Identity, operands of equal static shape (a
// broadcasting operand would need its adjoint reduced back; such a Gradient is left as it is and
// reported unsupported). An x that y does not depend on gets zeros. `zs` is not supported.
// Guarantees: the values of the textbook derivative, evaluated in IEEE arithmetic.
bool lower_gradient(ir::Model& model);

}  // namespace onnxc::passes
