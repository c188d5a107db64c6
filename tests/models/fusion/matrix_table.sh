#!/usr/bin/env bash
# Prints the fusion matrix of the transformers models (hf_manifest.txt) as a Markdown table, measured
# now: per model, the fused ops after `onnxc optimize` against the architecture's count (have/want),
# the compiled model's largest error against the framework's outputs (`onnxc compare`, both data
# sets, at the row's rtol,atol: 1e-4,1e-5 unless given), and ONNX Runtime on the optimized model
# (bench/peers/check_ort.py; "-" without it).
#
#   tests/models/fusion/matrix_table.sh ONNXC [MODEL...]      (docs/fusion-matrix.md holds a run)
set -uo pipefail
ONNXC="$(realpath "$1")"
shift
HERE="$(cd "$(dirname "$0")" && pwd)"
PEERS="$(cd "$HERE/../../../bench/peers" && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/onnxc-matrix-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
py=$("$PEERS/python.sh" 2>/dev/null) || py=""
models=("$@")
((${#models[@]})) || mapfile -t models < <(awk '/^hf_/{print $1}' "$HERE/hf_manifest.txt")

op_count() {  # MODEL_FILE OP
  "$ONNXC" inspect "$1" --no-coverage 2>/dev/null | awk -v op="$2" '/^ops /{h=1; next} h && NF==2 && $1 == op {s += $2} END {print s+0}'
}
cell() {  # HAVE WANT
  if [[ $1 == "$2" ]]; then echo "$1"; else echo "**$1/$2**"; fi
}

echo "| model | exporter | opset | Attention | LayerNorm | RMSNorm | Gelu | Rotary | max abs err vs torch | ORT on optimize output |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for m in "${models[@]}"; do
  read -r _ a ln rms gelu _ _ rot tol <<<"$(awk -v m="$m" '$1 == m' "$HERE/hf_manifest.txt")"
  IFS=, read -r rtol atol <<<"${tol:-1e-4,1e-5}"
  case $m in
    *_dynamo_fp16) arch=${m%_dynamo_fp16} exp="dynamo, fp16" ;;
    *_dynamo_op23) arch=${m%_dynamo_op23} exp="dynamo, opset 23" ;;
    *_dynamo) arch=${m%_dynamo} exp=dynamo ;;
    *) arch=${m%_ts} exp=TorchScript ;;
  esac
  arch=${arch#hf_}
  dir="$HERE/$m"
  opset=$("$ONNXC" inspect "$dir/model.onnx" --no-coverage 2>/dev/null | awk '/^opsets/{for (i = 2; i < NF; i++) if ($i == "ai.onnx") print $(i + 1)}')
  if ! "$ONNXC" optimize "$dir/model.onnx" -o "$WORK/f.onnx" >/dev/null 2>&1; then
    echo "| $arch | $exp | $opset | optimize failed | | | | | | |"
    continue
  fi
  cells=()
  for pair in "Attention $a" "LayerNormalization $ln" "RMSNormalization $rms" "Gelu $gelu" "RotaryEmbedding ${rot:-0}"; do
    read -r op want <<<"$pair"
    cells+=("$(cell "$(op_count "$WORK/f.onnx" "$op")" "$want")")
  done
  err=$("$ONNXC" compare "$dir/model.onnx" "$dir" --rtol "$rtol" --atol "$atol" 2>&1 |
        awk 'NF == 6 && $5 ~ /^[0-9]+\/[0-9]+$/ {if ($2 + 0 > m) m = $2 + 0; n++; if ($NF != "ok") bad = 1}
             END {if (!n) print "compile failed"; else printf "%.1e%s", m, bad ? " (MISMATCH)" : ""}')
  ort="-"
  if [[ -n $py ]]; then
    if "$py" "$PEERS/check_ort.py" "$WORK/f.onnx" "$dir" --rtol "$rtol" --atol "$atol" >"$WORK/ort" 2>&1; then
      ort="match ($(grep -oE 'max abs err [0-9.e+-]+' "$WORK/ort" | awk '{if ($4 + 0 > m) m = $4 + 0} END {printf "%.1e", m}'))"
    else
      ort="**$(grep -m1 -oE 'MISMATCH|cannot load[^:]*' "$WORK/ort" || echo error)**"
    fi
  fi
  echo "| $arch | $exp | $opset | ${cells[0]} | ${cells[1]} | ${cells[2]} | ${cells[3]} | ${cells[4]} | $err | $ort |"
done
