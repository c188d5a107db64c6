"""Writes a copy of an ONNX model whose chosen intermediate values are graph outputs too, with
reference outputs for one data set computed by onnxc on this machine's CPU, so that one
`onnxc compare --target cuda` on a GPU says which stage first differs from the CPU.

  python bench/gpu/bisect_model.py MODEL_DIR OUT_DIR ONNXC [SUBSTRING...]

Values whose names contain any SUBSTRING (default: the outputs of every MatMul, Einsum, Conv,
LayerNormalization, Softmax, Gelu/Erf, Add and Transpose node) become outputs, in graph order
(float values only: integer ones are shape arithmetic, which must stay foldable).
Needs the onnx package (the peers venv has it).
"""
import os
import shutil
import subprocess
import sys

import onnx
from onnx import shape_inference

src, out, onnxc = sys.argv[1], sys.argv[2], sys.argv[3]
wanted = sys.argv[4:]
ops = {"MatMul", "Einsum", "Conv", "LayerNormalization", "Softmax", "Erf", "Gelu", "Add", "Transpose"}
m = shape_inference.infer_shapes(onnx.load(os.path.join(src, "model.onnx")))
types = {v.name: v for v in list(m.graph.value_info) + list(m.graph.output)}
have = {o.name for o in m.graph.output}
added = []
for n in m.graph.node:
    for o in n.output:
        if not o or o in have or o not in types or types[o].type.tensor_type.elem_type != onnx.TensorProto.FLOAT:
            continue  # float values only: integer ones are shape arithmetic, which must stay foldable
        if (wanted and any(w in o for w in wanted)) or (not wanted and n.op_type in ops):
            # Element type only: the exporter's shapes may name symbols that no input has.
            m.graph.output.append(onnx.helper.make_tensor_value_info(o, types[o].type.tensor_type.elem_type, None))
            have.add(o)
            added.append(o)
del m.graph.value_info[:]  # inference's guesses, with made-up symbols, are onnxc's to redo
shutil.rmtree(out, ignore_errors=True)
data = os.path.join(out, "test_data_set_0")
os.makedirs(data)
onnx.save(m, os.path.join(out, "model.onnx"))
ins = [i.name for i in m.graph.input if i.name not in {t.name for t in m.graph.initializer}]
args = [onnxc, "run", os.path.join(out, "model.onnx"), "-o", data]
for k, name in enumerate(ins):
    shutil.copy(os.path.join(src, "test_data_set_0", f"input_{k}.pb"), os.path.join(data, f"input_{k}.pb"))
    args += ["-i", f"{name}={os.path.join(data, f'input_{k}.pb')}"]
subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
print(f"{out}: {len(added)} intermediate outputs added, references from {onnxc} on the CPU")
