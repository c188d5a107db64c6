#!/usr/bin/env bash
# The language-model benchmark: a LLaMA-architecture decoder with random weights (bench/llm_export.py,
# ~0.43 B parameters by default), prefill 128 tokens then 64 decode steps, onnxc (float32 and
# --quantize int4-weights) beside ONNX Runtime (the same float32 export, and onnxc's int4 MatMulNBits
# model, each in a Python greedy loop with I/O binding) and ONNX Runtime GenAI (its model builder's
# int4 model of the same checkpoint, run by its generator), with the memory bandwidth (bench/triad)
# and each decode row as a fraction of its roofline. Everything generated goes under DIR (default
# build/llm, never committed).
#
#   bench/llm_bench.sh [--dir DIR] [--rounds R] [--threads N] [--rows LIST] [--ort-no-spin]
#                      [-- llm_export.py options]
#
# Needs a Python with the pinned packages of bench/peers/requirements.txt and requirements-llm.txt
# (bench/peers/install.sh --llm; or set LLM_PYTHON): torch and transformers export the model, the
# GenAI row is skipped (said so) without onnxruntime-genai. env: ONNXC (default build/tools/onnxc).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
DIR=$ROOT/build/llm ROUNDS=2 THREADS=2 ROWS=onnxc_fp32,onnxc_int4,ort_fp32,ort_int4,genai_int4 EXTRA=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --dir) DIR=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    --threads) THREADS=$2; shift ;;
    --rows) ROWS=$2; shift ;;
    --ort-no-spin) EXTRA+=(--ort-no-spin) ;;
    --) shift; break ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "llm_bench.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
  shift
done
ONNXC=${ONNXC:-$ROOT/build/tools/onnxc}
PY=${LLM_PYTHON:-$ROOT/build/peers-venv/bin/python}
[[ -x $ONNXC ]] || { echo "llm_bench.sh: no onnxc at $ONNXC (build first, or set ONNXC)" >&2; exit 2; }
"$PY" -c 'import torch, transformers, onnxruntime' 2>/dev/null ||
  { echo "llm_bench.sh: $PY lacks torch, transformers or onnxruntime (bench/peers/install.sh --llm, or set LLM_PYTHON)" >&2; exit 2; }
TRIAD=$ROOT/build/bench/triad
[[ -x $TRIAD ]] || { TRIAD=$DIR/triad; mkdir -p "$DIR"; cc -O2 -pthread "$HERE/triad.c" -o "$TRIAD"; }

[[ -f $DIR/fp32/model.onnx ]] || "$PY" "$HERE/llm_export.py" "$DIR" "$@"
if [[ ,$ROWS, == *,genai_int4,* && ! -f $DIR/genai_int4/genai_config.json ]]; then
  if "$PY" -c 'import onnxruntime_genai' 2>/dev/null; then
    "$PY" -m onnxruntime_genai.models.builder -i "$DIR/hf" -o "$DIR/genai_int4" -p int4 -e cpu -c "$DIR/genai_cache" >&2
  else
    echo "llm_bench.sh: onnxruntime-genai is not installed: the genai_int4 row is skipped" >&2
  fi
fi
"$PY" "$HERE/llm_bench.py" "$DIR" --onnxc "$ONNXC" --triad "$TRIAD" --threads "$THREADS" --rounds "$ROUNDS" --rows "$ROWS" "${EXTRA[@]}"
