"""The same script run with onnxruntime and with onnxc: each bundled model's inputs and outputs
(name, shape, type), metadata and outputs must agree. Run by the ONNX Runtime peer's interpreter
(bench/peers/python.sh, PyPI onnxruntime), which has no pytest; exit 77 (skipped) without one.

  check_ort_peer.py BUILD_PYTHON_DIR MODELS_DIR"""
import glob
import os
import sys

try:
    import numpy as np
    import onnxruntime
except ImportError as e:
    print(f"SKIPPED: no onnxruntime here ({e})")
    sys.exit(77)

sys.path.insert(0, sys.argv[1])
import onnxc  # noqa: E402  (after the build's package folder is on the path)


def ort_script(rt, path, feed_dir):
    so = rt.SessionOptions()
    so.intra_op_num_threads = 1
    sess = rt.InferenceSession(path, sess_options=so, providers=["CPUExecutionProvider"])
    feed = dict(onnxc.load_tensor(f) for f in sorted(glob.glob(os.path.join(feed_dir, "input_*.pb"))))
    outs = sess.run(None, {i.name: feed[i.name] for i in sess.get_inputs()})
    io = [(a.name, list(a.shape), a.type) for a in sess.get_inputs() + sess.get_outputs()]
    meta = sess.get_modelmeta()
    return io, (meta.producer_name, meta.graph_name, meta.domain, meta.description), outs


failures = 0
for name in ("encoder_layer", "decoder_prelayer_causal", "mha_cross_attention"):
    path = os.path.join(sys.argv[2], name, "model.onnx")
    for d in sorted(glob.glob(os.path.join(sys.argv[2], name, "test_data_set_*"))):
        io_a, meta_a, out_a = ort_script(onnxc, path, d)
        io_b, meta_b, out_b = ort_script(onnxruntime, path, d)
        worst = max(float(np.abs(a - b).max()) for a, b in zip(out_a, out_b))
        ok = io_a == io_b and meta_a == meta_b and all(
            a.shape == b.shape and a.dtype == b.dtype and np.allclose(a, b, rtol=1e-4, atol=1e-5)
            for a, b in zip(out_a, out_b))
        print(f"{'ok  ' if ok else 'FAIL'} {name}/{os.path.basename(d)}: max |onnxc - onnxruntime| {worst:.2e}")
        if io_a != io_b or meta_a != meta_b:
            print(f"     onnxc {io_a} {meta_a}\n     ort   {io_b} {meta_b}")
        failures += not ok
print(f"onnxruntime {onnxruntime.__version__}: {'all agree' if not failures else f'{failures} differ'}")
sys.exit(1 if failures else 0)
