#!/usr/bin/env bash
# tests/models/conv/<model>: onnxc's outputs match torch's on every data set, and after the passes
# exactly WANT_CONV Conv nodes remain (the others became GEMMs over their patches) and no
# BatchNormalization (each folded into its Conv).
#   check_conv.sh ONNXC MODEL_DIR WANT_CONV
set -uo pipefail
onnxc="$1" dir="$2" want="$3"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$onnxc" compare "$dir/model.onnx" "$dir" --rtol 1e-4 --atol 1e-5 || exit 1
"$onnxc" optimize "$dir/model.onnx" -o "$work/opt.onnx" >/dev/null || exit 1
convs="$("$onnxc" inspect "$work/opt.onnx" --no-coverage | awk '/^ops /{h=1; next} h && $1 == "Conv" {print $2}')"
if [ "${convs:-0}" != "$want" ]; then
  echo "FAILED: expected $want Conv nodes after the passes, found ${convs:-0}"
  exit 1
fi
bns="$("$onnxc" inspect "$work/opt.onnx" --no-coverage | awk '/^ops /{h=1; next} h && $1 == "BatchNormalization" {print $2}')"
if [ -n "$bns" ]; then
  echo "FAILED: $bns BatchNormalization nodes were not folded into their convolutions"
  exit 1
fi
echo "Conv nodes left after the passes: ${convs:-0}"
