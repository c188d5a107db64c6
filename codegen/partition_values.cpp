// SequenceConstruct as a chain of value host steps, and value copies (see partition_values.h).
#include "codegen/partition_values.h"

#include "codegen/host_steps.h"
#include "ir/error.h"
#include "onnxc/model_abi.h"

namespace onnxc::codegen {

namespace {

Step host_kernel(const std::string& name, int op, std::vector<int> inputs, int output) {
  Step k;
  k.name = name;
  k.kind = HostStep{op, {}, {}, {}};
  k.inputs = std::move(inputs);
  k.outputs = {output};
  return k;
}

int add_tensor(Partition& p, PlanTensor t) {
  p.tensors.push_back(std::move(t));
  return static_cast<int>(p.tensors.size()) - 1;
}

}  // namespace

void build_sequence_construct(ControlScope& s, const ir::Node& n) {
  Partition& p = s.plan();
  const ir::Value* y = n.output(0);
  ir::DType dtype = element_dtype(y->type());
  auto sequence = [&](size_t i) {  // the sequence after i inserts; the last is the node's output
    if (i == n.num_inputs()) return s.tensor_of(y);
    PlanTensor t;
    t.name = y->name() + "/construct" + std::to_string(i);
    t.dtype = dtype;
    t.value = ONNXC_VALUE_SEQUENCE;
    return add_tensor(p, std::move(t));
  };
  PlanTensor back;  // an absent position: insert at the back
  back.name = y->name() + "/at_back";
  back.dtype = ir::DType::Int64;
  back.kind = TensorKind::Weight;
  back.shape = {ir::Dim(0)};
  back.data = ir::Tensor::from_vector<int64_t>(ir::DType::Int64, {0}, {});
  int at_back = add_tensor(p, std::move(back));
  int seq = sequence(0);
  p.steps.push_back(host_kernel(n.describe(), ONNXC_HOST_VALUE_EMPTY, {}, seq));
  for (size_t i = 0; i < n.num_inputs(); ++i) {
    user_check(n.input(i)) << n.describe() << ": input " << i << " is absent";
    int x = s.tensor_of(n.input(i));
    int next = sequence(i + 1);
    p.steps.push_back(host_kernel(n.describe(), ONNXC_HOST_SEQ_INSERT, {seq, x, at_back}, next));
    seq = next;
  }
}

Step value_copy_kernel(const Partition& p, int src, int dst) {
  return host_kernel("copy of '" + p.tensors[src].name + "' to '" + p.tensors[dst].name + "'", ONNXC_HOST_VALUE_COPY,
                     {src}, dst);
}

}  // namespace onnxc::codegen
