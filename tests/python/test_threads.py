"""Threads: one session run from several Python threads at once (as ONNX Runtime allows), and the
intra_op_num_threads option, each giving the same numbers as a single-threaded run."""
import threading

import numpy as np

import onnxc
from conftest import random_feed


def test_concurrent_runs_of_one_session(encoder):
    sess = onnxc.InferenceSession(encoder)
    shapes = [(1, 3), (2, 8), (3, 5), (1, 17), (2, 2), (4, 11)]
    feeds = [random_feed(sess, b, s, seed=k) for k, (b, s) in enumerate(shapes)]
    expected = [sess.run(None, f)[0] for f in feeds]
    results, failures = {}, []

    def work(k):
        try:
            for _ in range(5):
                out = sess.run(None, feeds[k])[0]
                if not np.array_equal(out, expected[k]):
                    failures.append(f"thread {k}: a different result")
            results[k] = True
        except Exception as e:  # noqa: BLE001 - reported below with the thread that raised it
            failures.append(f"thread {k}: {e!r}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(shapes))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    assert len(results) == len(shapes)


def test_intra_op_threads_give_the_same_result(encoder):
    outs = []
    for n in (1, 2, 0):
        so = onnxc.SessionOptions()
        so.intra_op_num_threads = n
        sess = onnxc.InferenceSession(encoder, sess_options=so)
        outs.append(sess.run(None, random_feed(sess, 3, 40))[0])
    # Kernels split work differently by thread count but each element is computed the same way.
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(outs[0], outs[2], rtol=1e-6, atol=1e-6)


def test_threads_baked_in_at_compile_time(tmp_path):
    from conftest import model_dir
    import os
    lib = onnxc.compile(os.path.join(model_dir("encoder_layer"), "model.onnx"), tmp_path, threads=1)
    assert lib.info["threads"] == 1
    sess = onnxc.InferenceSession(lib)
    assert sess.run(None, random_feed(sess, 1, 4))[0].shape[:2] == (1, 4)
