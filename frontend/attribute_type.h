// The kind of value an ONNX attribute holds by the field that is set, for old models that leave
// `type` unset. Shared by the importer and the validator so both read an attribute the same way.
#pragma once

#include <onnx/onnx_pb.h>

namespace onnxc::frontend {

onnx::AttributeProto::AttributeType deduce_attribute_type(const onnx::AttributeProto& a);

}  // namespace onnxc::frontend
