#!/usr/bin/env bash
# One recurrent/control-flow model test: compile and compare against PyTorch's outputs on every
# data set. A model that needs an op code generation does not support yet (If, Loop, sequences) is
# reported SKIPPED (exit 77, ctest's SKIP_RETURN_CODE) with the compiler's message, never passed;
# the day the op compiles, the same test checks the numbers.
# With ATTENTION=N, the model must also fuse N attention blocks (`onnxc inspect --fusions --json`).
#   check_model.sh ONNXC MODEL_DIR [ATTENTION]
set -uo pipefail
onnxc="$1" dir="$2" want="${3:-}"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
"$onnxc" compare "$dir/model.onnx" "$dir" --rtol 1e-4 --atol 1e-5 >"$out" 2>&1
rc=$?
cat "$out"
if [ "$rc" -ne 0 ] && grep -q "code generation does not support" "$out"; then
  echo "SKIPPED: $(basename "$dir") needs ops onnxc cannot compile yet (see the message above)"
  exit 77
fi
[ "$rc" -eq 0 ] || exit "$rc"
if [ -n "$want" ]; then
  counts="$("$onnxc" inspect --fusions --json "$dir/model.onnx" | grep -o '"attention": *[0-9]*' | tail -1)"
  if [ "${counts##*[^0-9]}" != "$want" ]; then
    echo "FAILED: expected $want fused attention blocks, inspect --fusions says: ${counts:-nothing}"
    exit 1
  fi
  echo "fusions: $counts"
fi
