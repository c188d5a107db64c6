#!/usr/bin/env bash
# One check on one fusion test model (tests/models/fusion/<model>/), as a ctest:
#   fusion_test.sh ONNXC MODEL compile   onnxc compile + onnxc compare against torch (rtol 1e-4, atol 1e-5,
#                                        or the row's rtol,atol column)
#   fusion_test.sh ONNXC MODEL counts    inspect --fusions --json and the optimized graph's ops vs manifest.txt
#   fusion_test.sh ONNXC MODEL ort       ONNX Runtime on `onnxc optimize` output vs the torch outputs
# Exit 0 pass, 1 fail, 77 skipped (with the reason on stdout).
set -uo pipefail

ONNXC="$(realpath "$1")"
NAME="$2"
MODE="$3"
HERE="$(cd "$(dirname "$0")" && pwd)"
# ONNXC_FUSION_DIR: models (and their hf_manifest.txt) somewhere else (hf_live_test.sh's fresh exports).
ROOT="${ONNXC_FUSION_DIR:-$HERE}"
DIR="$ROOT/$NAME"
MANIFEST="$HERE/manifest.txt"
PEERS="$(cd "$HERE/../../../bench/peers" && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/onnxc-fusion-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

fail() { echo "FAIL [$NAME $MODE]: $*" >&2; exit 1; }
skip() { echo "SKIPPED [$NAME $MODE]: $*"; exit 77; }

# manifest.txt: the hand-written modules (gen_fusion_models.py); hf_manifest.txt: the transformers
# model matrix (gen_hf_matrix.py). Both have the same columns; `enabled:` is in manifest.txt.
row=$(awk -v m="$NAME" '$1 == m' "$MANIFEST" "$ROOT/hf_manifest.txt")
[[ -n $row ]] || fail "no line for $NAME in $MANIFEST or hf_manifest.txt"
read -r _ want_attention want_layer_norm want_rms_norm want_gelu form needs want_rotary tol <<<"$row"
# hf_manifest.txt's last column: rtol,atol against the framework (fp16 exports); else 1e-4,1e-5.
IFS=, read -r RTOL ATOL <<<"${tol:-1e-4,1e-5}"
enabled=" $(sed -n 's/^enabled://p' "$MANIFEST") "
is_enabled() { [[ $enabled == *" $1 "* ]]; }

# Count of each op in a model's op histogram (`onnxc inspect` lists "OP  N" under "ops").
op_count() {  # MODEL_FILE REGEX
  "$ONNXC" inspect "$1" --no-coverage 2>/dev/null |
    awk -v re="^($2)\$" '/^ops /{h=1; next} h && NF==2 && $1 ~ re {s += $2} END {print s+0}'
}

case "$MODE" in
compile)
  if ! "$ONNXC" compile "$DIR/model.onnx" -o "$WORK/lib" --name m >"$WORK/out" 2>&1; then
    if [[ $needs != "-" ]] && grep -q "$needs" "$WORK/out"; then
      skip "needs the $needs lowering (coverage helper): $(tail -1 "$WORK/out")"
    fi
    cat "$WORK/out" >&2
    fail "onnxc compile failed"
  fi
  "$ONNXC" compare "$WORK/lib/libm.so" "$DIR" --rtol "$RTOL" --atol "$ATOL" || fail "outputs differ from torch's"
  ;;

counts)
  "$ONNXC" inspect "$DIR/model.onnx" --fusions --json >"$WORK/fusions.json" 2>"$WORK/err"
  rc=$?
  if [[ $rc -ne 0 ]]; then
    grep -qiE "unknown (option|flag)|--fusions" "$WORK/err" &&
      skip "onnxc inspect --fusions is not available yet (fuse-core): $(head -1 "$WORK/err")"
    cat "$WORK/err" >&2
    fail "onnxc inspect --fusions --json exited $rc"
  fi
  "$ONNXC" optimize "$DIR/model.onnx" -o "$WORK/fused.onnx" >/dev/null 2>"$WORK/err" ||
    { cat "$WORK/err" >&2; fail "onnxc optimize failed"; }
  checked=() skipped=()
  # kind  rule  ops counted in the optimized graph  ops the export already has (ONNX Runtime's
  # contrib ops that expand_contrib_ops turns into the fused op count: they are fused already)
  while read -r kind rule ops native; do
    want_var="want_$kind"
    want=${!want_var}
    [[ -n $want ]] || continue  # a column this manifest does not have (rotary: hf_manifest.txt only)
    if ! is_enabled "$rule"; then
      skipped+=("$kind (rule '$rule' not enabled in manifest.txt)")
      continue
    fi
    fired=$(grep -oE "\"$kind\" *: *[0-9]+" "$WORK/fusions.json" | grep -oE "[0-9]+$")
    have=$(op_count "$WORK/fused.onnx" "$ops")
    before=$(op_count "$DIR/model.onnx" "$native")
    [[ $have -eq $want ]] || fail "$kind: the optimized graph has $have ($ops), manifest says $want"
    [[ ${fired:-0} -eq $((want - before)) ]] ||
      fail "$kind: inspect --fusions reports ${fired:-0} fused, expected $want - $before already in the export"
    checked+=("$kind=$want")
  done <<EOF
attention $form [A-Za-z.]*Attention Attention|com\.microsoft\.(Attention|MultiHeadAttention|GroupQueryAttention)
layer_norm layer_norm LayerNormalization LayerNormalization|com\.microsoft\.SkipLayerNormalization
rms_norm rms_norm RMSNormalization RMSNormalization|(com\.microsoft\.)?(Skip)?SimplifiedLayerNormalization
gelu gelu Gelu Gelu|com\.microsoft\.(Gelu|BiasGelu|FastGelu)
rotary rotary RotaryEmbedding RotaryEmbedding|com\.microsoft\.RotaryEmbedding
EOF
  echo "checked: ${checked[*]:-none}"
  ((${#skipped[@]} == 0)) || skip "not asserted yet: ${skipped[*]}"
  ;;

ort)
  py=$("$PEERS/python.sh" 2>"$WORK/why") || skip "$(cat "$WORK/why")"
  if ! "$py" "$PEERS/check_ort.py" "$DIR/model.onnx" "$DIR" --rtol "$RTOL" --atol "$ATOL" >"$WORK/out" 2>&1; then
    # torch's opset-23 export writes RotaryEmbedding caches of batch 1, which ONNX Runtime rejects:
    # then only the optimized model (onnxc expands them) is checked.
    grep -q "cannot load\|ONNXRuntimeError" "$WORK/out" ||
      { cat "$WORK/out" >&2; fail "ONNX Runtime does not reproduce torch's outputs on the original export"; }
    echo "note: ONNX Runtime cannot run the original export: $(grep -m1 -o 'Status Message: .*\|cannot load.*' "$WORK/out" | sed 's/\x1b\[[0-9;]*m//g')"
  fi
  "$ONNXC" optimize "$DIR/model.onnx" -o "$WORK/fused.onnx" >/dev/null 2>"$WORK/err" ||
    { cat "$WORK/err" >&2; fail "onnxc optimize failed"; }
  if [[ $(op_count "$WORK/fused.onnx" "onnxc\\..*") -gt 0 ]]; then
    # The seeds' attention forms have no ONNX op (and the CLI turns fusions off by family): ORT
    # checks the other fusions with attention kept unfused;
    # the fused forms are checked by the compile test (compiled, compared with torch).
    echo "note: onnxc-domain attention ops kept unfused for ONNX Runtime, which has no such ops"
    "$ONNXC" optimize "$DIR/model.onnx" -o "$WORK/fused.onnx" \
      --no-fuse attention >/dev/null 2>"$WORK/err" ||
      { cat "$WORK/err" >&2; fail "onnxc optimize --no-fuse failed"; }
  fi
  "$py" "$PEERS/check_ort.py" "$WORK/fused.onnx" "$DIR" --rtol "$RTOL" --atol "$ATOL" >"$WORK/out" 2>&1
  rc=$?
  if [[ $rc -eq 2 ]] && ! is_enabled optimize; then
    skip "ONNX Runtime cannot load the optimized model yet (fuse-core legalizes it): $(grep -m1 -i error "$WORK/out")"
  fi
  [[ $rc -eq 0 ]] || { cat "$WORK/out" >&2; fail "ONNX Runtime on the optimized model: exit $rc"; }
  ;;
*) fail "unknown mode '$MODE'" ;;
esac
exit 0
