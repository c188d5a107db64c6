// What the validator checks of an op's schema (arity, required inputs, attribute types), and the
// table of those facts for ai.onnx schemas newer than Debian's ONNX library knows (opsets 18-28).
#pragma once

#include <onnx/onnx_pb.h>

#include <limits>
#include <string>
#include <vector>

namespace onnxc::frontend {

struct SchemaFacts {
  static constexpr int kMany = std::numeric_limits<int>::max();
  struct Attr {
    std::string name;
    onnx::AttributeProto::AttributeType type;
    bool required;
  };
  std::string op;
  int since;
  int min_in, max_in, min_out, max_out;
  struct Input {
    std::string name;
    char option;  // 'S' single (required), 'O' optional, 'V' variadic
  };
  std::vector<Input> inputs;
  std::vector<Attr> attrs;
};

// Every ai.onnx schema introduced in opsets 18-28 (generated: frontend/newer_schemas.cpp).
const std::vector<SchemaFacts>& newer_schemas();
// The schema of `op` in effect at `opset` among those, or nullptr when none of them applies (the
// op is older and unchanged since, or unknown).
const SchemaFacts* find_newer_schema(const std::string& op, int64_t opset);

}  // namespace onnxc::frontend
