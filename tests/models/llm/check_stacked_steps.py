"""Every step of a decoding loop on the stacked-cache decoders (gen_tiny_decoder.py --stack MODE), in
onnxc (its stacked caches rewritten to in-place appends: passes/stacked_kv_cache) and in ONNX Runtime
(the model as exported): a prompt of 6 tokens, then 8 single-token steps, each step's presents fed back
as the next pasts. Every output of every step must agree (logits and the whole stacked presents).
Run by the ONNX Runtime peer's interpreter (it has numpy and onnxruntime).

    check_stacked_steps.py BUILD_PYTHON_DIR MODEL_DIR...
"""
import json
import sys

import numpy as np
import onnxruntime as ort

sys.path.insert(0, sys.argv[1])
import onnxc  # noqa: E402

worst = 0.0
for model_dir in sys.argv[2:]:
    path = f"{model_dir}/model.onnx"
    mine, ref = onnxc.InferenceSession(path), ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    pasts = [i for i in ref.get_inputs() if "past" in i.name]
    outs = [o.name for o in ref.get_outputs()]
    feed = {}
    for i in pasts:  # an empty past: batch 1, past length 0 (the symbol that names the length)
        feed[i.name] = np.zeros([0 if isinstance(d, str) and "past" in d else 1 if isinstance(d, str) else d
                                 for d in i.shape], np.float32)
    ids, total = json.load(open(f"{model_dir}/expected.json"))["prompt"], 0
    for step in range(9):
        s = len(ids)
        feed.update(input_ids=np.array([ids], np.int64), attention_mask=np.ones((1, total + s), np.int64),
                    position_ids=np.arange(total, total + s, dtype=np.int64)[None])
        got, want = mine.run(outs, feed), ref.run(outs, feed)
        for name, g, w in zip(outs, got, want):
            assert g.shape == w.shape, f"{path} step {step} {name}: shape {g.shape}, ONNX Runtime {w.shape}"
            err = float(np.max(np.abs(g - w)) / (np.max(np.abs(w)) + 1e-30))
            worst = max(worst, err)
            assert err < 1e-4, f"{path} step {step} {name}: max error {err:.3g} of the largest magnitude"
        total += s
        ids = [int(np.argmax(want[0][0, -1]))]
        for i, name in zip(pasts, [o for o in outs if "present" in o]):
            feed[i.name] = want[outs.index(name)]
    print(f"{model_dir}: 9 steps, every output within {worst:.2g} of ONNX Runtime")
print("ok")
