#!/usr/bin/env python3
"""Writes expected_pass_1_23.txt: the tests of the ONNX 1.23 node suite that the ctest
conformance.onnx_node_1_23 runs and requires to pass. The suite takes about 30 minutes cold on two
cores, so the ctest runs a fixed sample: every test of an op that changed in opsets 23-28 or gained a
lowering since (named by the prefixes below), plus every STRIDE-th of the others in name order. Of
the sample, the tests that passed in a full run (its --tsv table) are listed.

Usage: sample_1_23.py FULL_RUN.tsv [RERUN.tsv...] > tests/conformance/expected_pass_1_23.txt
Full run: onnxc test-suite ../shared/onnx-node-tests/node --jobs 2 --threads 1 --quiet --tsv FULL_RUN.tsv
"""
import sys

STRIDE = 4
CHANGED = ("attention", "rotary_embedding", "cast", "swish", "swiglu", "tensorscatter", "cumprod", "bitcast",
           "bitshift", "range", "mod_", "spacetodepth", "depthtospace", "celu", "reduce_log_sum", "flatten",
           "reshape", "transpose", "squeeze", "unsqueeze", "shape", "size", "identity", "constant", "quantizelinear",
           "dequantizelinear", "top_k", "split_to_sequence", "rms_normalization", "resize", "dft", "edge_pad",
           "reflect_pad", "wrap_pad", "constant_pad")
# Ops that gained a lowering after the first sample (float8 casts are under "cast" above). Kept apart
# so that the every-STRIDE-th selection of the others, and so the earlier sample, does not move.
ADDED = ("group_normalization", "l1normalization", "l2normalization", "lpnormalization", "center_crop_pad",
         "col2im", "affine_grid", "string_split", "regex_full_match", "optional_has_element", "reduce_l1_do_not",
         "reduce_l2_do_not", "reduce_max_do_not", "reduce_min_do_not", "reduce_mean_do_not", "reduce_prod_do_not",
         "reduce_sum_square_do_not", "causal_conv_with_state", "gridsample_volumetric", "deform_conv",
         "basic_deform_conv", "ai_onnx_ml_binarizer", "ai_onnx_ml_array_feature_extractor", "equal_string")


def main(tsvs):
    # A full run's table, then optionally tables of reruns of some tests (a later row replaces an earlier).
    status = {}
    for tsv in tsvs:
        rows = [line.rstrip("\n").split("\t") for line in open(tsv)][1:]
        status.update({r[0]: r[1] for r in rows if len(r) >= 2})
    names = sorted(status)
    others = [n for n in names if not n[len("test_"):].startswith(CHANGED)]
    sample = {n for n in names if n[len("test_"):].startswith(CHANGED + ADDED)} | set(others[::STRIDE])
    passed = sorted(n for n in sample if status[n] == "passed")
    print("# The ONNX 1.23 node tests (../shared/onnx-node-tests/node) that must pass: a fixed sample of the")
    print("# suite (tests of ops changed in opsets 23-28 or lowered since, and every %dth other test), written" % STRIDE)
    print("# by sample_1_23.py from a full run%s (%d of %d sampled tests passed; %d tests in the suite)."
          % (" and reruns" if len(tsvs) > 1 else "", len(passed), len(sample), len(names)))
    for n in passed:
        print(n)


if __name__ == "__main__":
    main(sys.argv[1:])
