"""Runs a model with ONNX Runtime on ONNX test-data folders and compares with output_K.pb: the
independent check of `onnxc optimize` (its fused models must still run elsewhere and match).

  check_ort.py MODEL DATA... [--rtol R] [--atol A]
    DATA: test_data_set_N folders or folders holding them.   exit 0 match, 1 mismatch, 2 error
"""
import argparse
import pathlib
import re
import sys

import numpy as np


def die(msg):
    print(f"check_ort: {msg}", file=sys.stderr)
    sys.exit(2)


def numbered(folder, prefix):
    files = [f for f in folder.iterdir() if re.fullmatch(rf"{prefix}\d+\.pb", f.name)]
    return sorted(files, key=lambda f: int(f.name[len(prefix):-3]))


def data_sets(folder):
    folder = pathlib.Path(folder)
    if numbered(folder, "input_"):
        return [folder]
    sets = sorted((f for f in folder.iterdir() if re.fullmatch(r"test_data_set_\d+", f.name)),
                  key=lambda f: int(f.name[14:]))
    if not sets:
        die(f"{folder}: no test_data_set_* folders")
    return sets


def read_tensor(path):
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("data", nargs="+")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-7)
    o = ap.parse_args()
    import onnxruntime as ort
    try:
        sess = ort.InferenceSession(o.model, providers=["CPUExecutionProvider"])
    except Exception as e:
        die(f"ONNX Runtime cannot load {o.model}: {str(e).splitlines()[0]}")
    in_names = [i.name for i in sess.get_inputs()]
    out_names = [i.name for i in sess.get_outputs()]
    bad = 0
    for s in (x for d in o.data for x in data_sets(d)):
        feeds = {in_names[k]: read_tensor(f) for k, f in enumerate(numbered(s, "input_"))}
        got_all = sess.run(None, feeds)
        for k, f in enumerate(numbered(s, "output_")):
            ref, got, name = read_tensor(f), np.asarray(got_all[k]), out_names[k]
            if got.shape != ref.shape:
                print(f"{s}: output '{name}': shape {list(got.shape)} expected {list(ref.shape)}")
                bad += 1
                continue
            a, e = got.astype(np.float64).ravel(), ref.astype(np.float64).ravel()
            err = np.abs(a - e)
            ok = (np.isnan(a) & np.isnan(e)) | (a == e) | (err <= o.atol + o.rtol * np.abs(e))
            fin = np.isfinite(err)
            diff2, ref2 = float(np.sum(err[fin] ** 2)), float(np.sum(e[fin] ** 2))
            # ‖got − ref‖ / ‖ref‖ over the finite elements, as `onnxc compare` reports it.
            norm_rel = (diff2 / ref2) ** 0.5 if ref2 > 0 else diff2 ** 0.5
            mism = int(np.count_nonzero(~ok))
            max_abs = float(np.max(err[fin])) if fin.any() else float("nan")
            print(f"{s}: output '{name}': max abs err {max_abs:.2e}, norm rel err {norm_rel:.2e}, "
                  f"{mism}/{e.size} mismatches")
            bad += mism > 0
    print(f"check_ort: {'MISMATCH' if bad else 'all outputs match'} (rtol {o.rtol}, atol {o.atol})")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
