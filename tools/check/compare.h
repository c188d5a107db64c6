// Output comparison with ONNX's backend-test rule: a float element matches when
// |actual - expected| <= atol + rtol * |expected| (NaN matches NaN, an infinity matches the same
// infinity); integers, bools and strings must be equal; dtype and shape must be equal. Reports the
// largest errors with their row-major multi-indices, so a failure says where it is.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/tensor_io.h"
#include "ir/tensor.h"

namespace onnxc::check {

struct Tolerance {
  double rtol = 1e-3;  // ONNX backend tests' defaults
  double atol = 1e-7;
};

// One element that did not match (or, for a matching tensor, one of the largest errors).
struct ElementError {
  std::vector<int64_t> index;  // row-major multi-index, ONNX axis order
  std::string actual, expected;  // printed values (numbers, bools or strings)
  double abs_err = 0;            // |actual - expected|; NaN/inf when one side is NaN/inf and the other not
  double rel_err = 0;            // abs_err / |expected|; inf when expected is 0 and abs_err > 0
};

struct TensorReport {
  std::string name;
  bool ok = true;
  // Set when the tensors cannot be compared element by element (dtype or shape differs).
  std::string problem;
  int64_t numel = 0;
  int64_t mismatches = 0;
  double max_abs_err = 0;  // over all elements (0 for exact dtypes that match)
  double max_rel_err = 0;  // over elements with expected != 0
  // ‖actual − expected‖₂ / ‖expected‖₂ over the elements where both are finite: the error of the
  // tensor as a whole, meaningful where near-zero elements make the elementwise maximum huge
  // (reduced-precision runs); NaN when the expected finite elements are all zero but not the actual.
  double norm_rel_err = 0;
  bool exact = false;      // compared exactly (ints, bools, strings)
  std::vector<ElementError> worst;  // failing elements by decreasing error (at most max_worst)
};

// Compares one output. `max_worst` bounds the listed elements.
TensorReport compare_tensors(const std::string& name, const ir::Tensor& actual, const ir::Tensor& expected,
                             const Tolerance& tol, size_t max_worst = 5);

// Compares a sequence or optional output (or a tensor, as compare_tensors): the kinds, whether an optional
// holds a value and the sequence lengths must agree, then each tensor element-wise; the report is the
// first failing tensor's ("name[2]"), or a summary over all of them when every one passes.
TensorReport compare_values(const std::string& name, const frontend::TestValue& actual,
                            const frontend::TestValue& expected, const Tolerance& tol, size_t max_worst = 5);

// The row-major multi-index of flat element `flat` in a tensor of `dims`.
std::vector<int64_t> unravel_index(int64_t flat, const std::vector<int64_t>& dims);
// "[0,3,17]"
std::string index_str(const std::vector<int64_t>& index);
// "f32[2,5,64]"
std::string tensor_type_str(const ir::Tensor& t);

// A readable aligned table, one row per output, followed by the worst elements of each failing
// output. `title` heads the table (e.g. the data-set folder).
std::string format_reports(const std::string& title, const std::vector<TensorReport>& reports,
                           const Tolerance& tol);

}  // namespace onnxc::check
