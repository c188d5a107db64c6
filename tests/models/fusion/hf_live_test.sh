#!/usr/bin/env bash
# Exports ARCHS afresh with the PyPI torch and transformers found here (gen_hf_matrix.py, both
# exporters) and runs fusion_test.sh's compile and counts checks on them: today's exporters, not
# only the committed files. Skipped (exit 77, saying why) without torch >= 2, transformers >= 5 and
# onnxscript; the interpreter is $ONNXC_HF_PYTHON, else python3.
#   hf_live_test.sh ONNXC ARCH[,ARCH...]
set -uo pipefail
ONNXC="$(realpath "$1")"
ARCHS="$2"
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/onnxc-hf-live-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
py="${ONNXC_HF_PYTHON:-python3}"
why=$("$py" - 2>&1 <<'PY'
import torch, transformers, onnxscript  # noqa: F401
major = lambda v: int(v.split(".")[0])
assert major(torch.__version__) >= 2 and major(transformers.__version__) >= 5, \
    f"torch {torch.__version__}, transformers {transformers.__version__}"
PY
) || { echo "SKIPPED [hf_live $ARCHS]: needs PyPI torch >= 2, transformers >= 5 and onnxscript in $py" \
              "(set ONNXC_HF_PYTHON): $(echo "$why" | tail -1)"; exit 77; }
"$py" "$HERE/gen_hf_matrix.py" --out "$WORK" --only "$ARCHS" >"$WORK/gen.log" 2>&1 ||
  { tail -20 "$WORK/gen.log" >&2; echo "FAIL [hf_live $ARCHS]: the export failed" >&2; exit 1; }
grep "^FAILED" "$WORK/gen.log" >&2 && { echo "FAIL [hf_live $ARCHS]: an export failed" >&2; exit 1; }
rc=0
for name in $(awk '/^hf_/{print $1}' "$WORK/hf_manifest.txt"); do
  for mode in compile counts; do
    ONNXC_FUSION_DIR="$WORK" bash "$HERE/fusion_test.sh" "$ONNXC" "$name" "$mode" || rc=1
  done
done
exit $rc
