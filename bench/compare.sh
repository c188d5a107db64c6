#!/usr/bin/env bash
# Times onnxc and ONNX Runtime (CPU) on the same model and shapes, one after the other in the same
# run, and prints both and the ratio.
#
#   bench/compare.sh MODEL [SHAPES]
#     SHAPES   input shapes as for `onnxc bench --shapes`, e.g. src=1x128x64,src_key_padding_mask=1x128
#              (default: dynamic dims from $DIMS, else batch-like symbols 1 and the rest 128)
#   env: THREADS (default 1), RUNS (default 50), WARMUP (default 5), DIMS (e.g. batch=1,seq=128),
#        ONNXC (default: build/tools/onnxc, else onnxc on PATH)
#
# Needs ONNX Runtime from PyPI: bench/peers/install.sh (or ONNXC_PEERS_PYTHON=an interpreter with it).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
if [[ $# -lt 1 || $1 == -h || $1 == --help ]]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  exit $(( $# < 1 ? 2 : 0 ))
fi
MODEL=$1
SHAPES=${2:-}
THREADS=${THREADS:-1}
RUNS=${RUNS:-50}
WARMUP=${WARMUP:-5}
DIMS=${DIMS:-}
ONNXC=${ONNXC:-}
if [[ -z $ONNXC ]]; then
  if [[ -x $ROOT/build/tools/onnxc ]]; then ONNXC=$ROOT/build/tools/onnxc; else ONNXC=$(command -v onnxc || true); fi
fi
[[ -x $ONNXC ]] || { echo "compare.sh: no onnxc binary (set ONNXC=...)" >&2; exit 2; }
PEER_PY=$("$HERE/peers/python.sh") || { echo "compare.sh: ONNX Runtime is missing" >&2; exit 2; }

args=(--threads "$THREADS" --runs "$RUNS" --warmup "$WARMUP" --tsv)
[[ -n $SHAPES ]] && args+=(--shapes "$SHAPES")
[[ -n $DIMS ]] && args+=(--dims "$DIMS")

# onnxc compiles the .onnx first (through the kernel cache); compilation is not timed.
read -r o_med o_p10 o_p90 o_rss o_arena < <("$ONNXC" bench "$MODEL" "${args[@]}")
read -r r_med r_p10 r_p90 r_rss _ < <("$PEER_PY" "$HERE/peers/bench_peer.py" "$MODEL" "${args[@]}")

awk -v m="$MODEL" -v s="${SHAPES:-${DIMS:-defaults}}" -v t="$THREADS" -v n="$RUNS" \
    -v om="$o_med" -v o1="$o_p10" -v o9="$o_p90" -v orss="$o_rss" -v oa="$o_arena" \
    -v rm="$r_med" -v r1="$r_p10" -v r9="$r_p90" -v rrss="$r_rss" 'BEGIN {
  printf "model %s, shapes %s, %d thread(s), %d runs\n", m, s, t, n
  printf "%-14s %10s %10s %10s %14s\n", "", "median ms", "p10 ms", "p90 ms", "peak RSS MiB"
  printf "%-14s %10.4f %10.4f %10.4f %14.1f   (arena %.1f KiB)\n", "onnxc", om, o1, o9, orss / 1048576, oa / 1024
  printf "%-14s %10.4f %10.4f %10.4f %14.1f\n", "onnxruntime", rm, r1, r9, rrss / 1048576
  if (om > 0) printf "ratio (ORT median / onnxc median): %.2fx %s\n", rm / om, (rm >= om ? "(onnxc faster)" : "(onnxc slower)")
}'
