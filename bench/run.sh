#!/usr/bin/env bash
# The benchmark: onnxc against ONNX Runtime (CPU, graph optimization "all", the same thread
# count), timed alternately in the same run, on models bench/models.py builds with Debian's torch
# (random weights, fixed seed) under build/benchmodels (never committed).
#
#   bench/run.sh [--quick] [--large] [--int8] [--cnn] [--target T] [--openvino] [--threads N] [--rounds R] [--runs N] [--cold]
#     --quick    BERT and GPT-2 at b1 s128 only (for iteration); default: the full table (BERT,
#                GPT-2, one GPT-2 decoding step with a past of 127, ViT-B/16, nn.Transformer at b1).
#                The step runs as in a generation loop: onnxc bench --keep-cache (the session's KV
#                cache, past read in place) against ONNX Runtime through I/O binding (bench_peer --bind)
#     --cnn      the convolutional table instead: ResNet-50, MobileNetV3-large, EfficientNet-B0,
#                ConvNeXt-Tiny at b1 224x224 and LR-ASPP (one library, dynamic H x W) at 224x288
#                and 480x640 (with --large also the four classifiers at b8)
#     --large    also BERT and GPT-2 at b8 s128 and b1 s512
#     --int8     also BERT and GPT-2 at b1 s128 compiled with --quantize dynamic-int8 (model names
#                *_int8). ORT runs its own dynamic int8 form of the same model (ort_quantize_dynamic.py:
#                DynamicQuantizeLinear + MatMulInteger, what its quantize_dynamic writes), so the ratio
#                is int8 against int8; the lines after the table give each against ORT's float32 run
#                and both int8 results' error against float32 (norm-relative, final hidden states)
#     --target   compile onnxc's libraries for T (default host), e.g. x86-64-linux-avx2-fma to measure
#                the AVX2 code on an AVX-512 machine; the header names the ISA and its measured peak
#     --openvino also time OpenVINO (PyPI) on each float32 row: two more columns, ms and onnxc/OV
#     --threads  runtime threads for all (default 2)
#     --rounds   alternating rounds; each prints medians of --runs runs; the table shows the
#                median over rounds (default 3)
#     --runs     timed runs per round (default 10, after 3 warmup runs)
#     --cold     also time a cold compile (empty kernel cache) of each model (the full table always does)
#     --only N,… only the rows of these models (e.g. --only gpt2_step), from the table the other options choose
#   env: ONNXC (default build/tools/onnxc), MODELS (default build/benchmodels), LIBS (where the
#        compiled libraries go, default MODELS/lib-TARGET: another onnxc builds its own there)
#
# Columns: onnxc and ORT median latency, ratio onnxc/ORT (< 1: onnxc faster), the lowest and highest
# ratio of a single round (a wide range: the machine moved during the row), peak RSS of each process
# during its runs, onnxc compile time (cold: no kernel cache; warm: every kernel cached) and its peak
# RSS. Needs ONNX Runtime from PyPI: bench/peers/install.sh [--openvino] (or ONNXC_PEERS_PYTHON).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
QUICK=0 LARGE=0 INT8=0 CNN=0 THREADS=2 ROUNDS=3 RUNS=10 COLD=0 TARGET=host OPENVINO=0 ONLY=
while [[ $# -gt 0 ]]; do
  case $1 in
    --quick) QUICK=1 ;;
    --large) LARGE=1 ;;
    --int8) INT8=1 ;;
    --cnn) CNN=1 ;;
    --target) TARGET=$2; shift ;;
    --openvino) OPENVINO=1 ;;
    --threads) THREADS=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    --runs) RUNS=$2; shift ;;
    --cold) COLD=1 ;;
    --only) ONLY=$2; shift ;;
    -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
  shift
done
ONNXC=${ONNXC:-$ROOT/build/tools/onnxc}
MODELS=${MODELS:-$ROOT/build/benchmodels}
[[ -x $ONNXC ]] || { echo "run.sh: no onnxc at $ONNXC (build first, or set ONNXC)" >&2; exit 2; }
PEER_PY=$("$HERE/peers/python.sh") || { echo "run.sh: ONNX Runtime is missing" >&2; exit 2; }
if (( OPENVINO )); then
  "$PEER_PY" -c 'import openvino' 2>/dev/null || { echo "run.sh: OpenVINO is missing (bench/peers/install.sh --openvino)" >&2; exit 2; }
fi
(( QUICK )) || COLD=1

# model name, then per row: label and onnxc bench --shapes/--dims arguments (ORT takes the same).
ROWS=(
  "bert|b1 s128|--dims batch=1,seq=128"
  "gpt2|b1 s128|--dims batch=1,seq=128"
)
if (( ! QUICK )); then
  ROWS+=(
    "gpt2_step|b1 step past127|--dims batch=1,past=127"
    "gpt2_step_stacked|b1 step past127, stacked cache|--dims batch=1,past=127"
    "vit|b1 224px|--dims batch=1"
    "nn_transformer|b1 s128|--dims batch=1,seq=128,tgt_seq=128"
  )
fi
if (( CNN )); then
  ROWS=(
    "resnet50|b1 224px|--dims batch=1"
    "mobilenet_v3_large|b1 224px|--dims batch=1"
    "efficientnet_b0|b1 224px|--dims batch=1"
    "convnext_tiny|b1 224px|--dims batch=1"
    "lraspp_mobilenet_v3|b1 224x288|--dims batch=1,height=224,width=288"
    "lraspp_mobilenet_v3|b1 480x640|--dims batch=1,height=480,width=640"
  )
  (( LARGE )) && ROWS+=("resnet50|b8 224px|--dims batch=8" "mobilenet_v3_large|b8 224px|--dims batch=8"
                       "efficientnet_b0|b8 224px|--dims batch=8" "convnext_tiny|b8 224px|--dims batch=8")
fi
if (( INT8 )); then
  ROWS+=(
    "bert_int8|b1 s128|--dims batch=1,seq=128"
    "gpt2_int8|b1 s128|--dims batch=1,seq=128"
  )
fi
if (( LARGE && ! CNN )); then
  ROWS+=(
    "bert|b8 s128|--dims batch=8,seq=128"
    "gpt2|b8 s128|--dims batch=8,seq=128"
    "bert|b1 s512|--dims batch=1,seq=512"
    "gpt2|b1 s512|--dims batch=1,seq=512"
  )
fi

if [[ -n $ONLY ]]; then
  kept=()
  for row in "${ROWS[@]}"; do [[ ,$ONLY, == *,"${row%%|*}",* ]] && kept+=("$row"); done
  (( ${#kept[@]} )) || { echo "run.sh: --only $ONLY: no such row in this table" >&2; exit 2; }
  ROWS=("${kept[@]}")
fi
names=$(printf '%s\n' "${ROWS[@]}" | cut -d'|' -f1 | sort -u)
# NAME_int8 is NAME's model compiled with --quantize dynamic-int8.
model_of() { echo "${1%_int8}"; }
# :force, so an *_int8 row is int8 even on a target where onnxc would keep the model float32.
flags_of() { echo "--target $TARGET"; [[ $1 == *_int8 ]] && echo "--quantize dynamic-int8:force" || true; }
# shellcheck disable=SC2046
/usr/bin/python3 "$HERE/models.py" "$MODELS" $(for n in $names; do model_of "$n"; done | sort -u) >/dev/null
# The model ONNX Runtime runs for a row: its own int8 form for *_int8 rows.
ort_model_of() {
  if [[ $1 == *_int8 ]]; then echo "$MODELS/$(model_of "$1")_ortq.onnx"; else echo "$MODELS/$1.onnx"; fi
}
for n in $names; do
  if [[ $n == *_int8 ]]; then
    "$PEER_PY" "$HERE/ort_quantize_dynamic.py" "$MODELS/$(model_of "$n").onnx" "$(ort_model_of "$n")" >/dev/null
  fi
done

median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
timed() {  # prints "seconds maxrss_kib" of the command, its output to stderr
  local f; f=$(mktemp)
  /usr/bin/time -f '%e %M' -o "$f" "$@" >&2
  cat "$f"; rm -f "$f"
}

declare -A CC_COLD CC_WARM CC_RSS ONNXC_MS ORT_MS  # the latencies are keyed by "model|shape"
LIBS=${LIBS:-$MODELS/lib-$TARGET}
for name in $names; do
  out=$LIBS/$name
  if (( COLD )); then  # a fresh kernel cache: cold, then warm from what it filled
    cache=$(mktemp -d)
    # shellcheck disable=SC2046
    read -r CC_COLD[$name] CC_RSS[$name] < <(ONNXC_CACHE_DIR=$cache timed "$ONNXC" compile "$MODELS/$(model_of "$name").onnx" -o "$out" --name "$name" $(flags_of "$name") -q)
    # shellcheck disable=SC2046
    read -r CC_WARM[$name] rss < <(ONNXC_CACHE_DIR=$cache timed "$ONNXC" compile "$MODELS/$(model_of "$name").onnx" -o "$out" --name "$name" $(flags_of "$name") -q)
    rm -rf "$cache"
  else
    # shellcheck disable=SC2046
    "$ONNXC" compile "$MODELS/$(model_of "$name").onnx" -o "$out" --name "$name" $(flags_of "$name") -q  # fills the kernel cache
    # shellcheck disable=SC2046
    read -r CC_WARM[$name] rss < <(timed "$ONNXC" compile "$MODELS/$(model_of "$name").onnx" -o "$out" --name "$name" $(flags_of "$name") -q)
  fi
  [[ -n ${CC_RSS[$name]:-} ]] || CC_RSS[$name]=$rss
done

peers=$("$PEER_PY" -c 'import onnxruntime as o; print("onnxruntime", o.__version__)')
(( OPENVINO )) && peers+=", $("$PEER_PY" -c 'import openvino as v; print("openvino", v.__version__.split("-")[0])')"
echo "onnxc $(git -C "$ROOT" rev-parse --short HEAD) vs $peers (PyPI); $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores;" \
     "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
# The ISA the libraries were compiled for and its fp32 FMA peak on this machine (`onnxc bench`
# measures it for the library's own ISA).
"$ONNXC" bench "$LIBS/$(printf '%s\n' "${ROWS[@]}" | head -1 | cut -d'|' -f1)/lib$(printf '%s\n' "${ROWS[@]}" | head -1 | cut -d'|' -f1).so" \
  $(printf '%s\n' "${ROWS[@]}" | head -1 | cut -d'|' -f3) --threads "$THREADS" --runs 1 --warmup 0 2>/dev/null | grep '^target' || true
printf '%-19s %-17s %3s %10s %10s %7s %11s %9s %9s %9s %9s %9s' model shape thr "onnxc ms" "ORT ms" ratio \
  "rounds" "onnxc MiB" "ORT MiB" "cold s" "warm s" "cc MiB"
(( OPENVINO )) && printf ' %9s %7s' "OV ms" "vs OV"
echo
for row in "${ROWS[@]}"; do
  IFS='|' read -r name label dims <<<"$row"
  lib=$LIBS/$name/lib$name.so
  # shellcheck disable=SC2206
  args=($dims --threads "$THREADS" --runs "$RUNS" --warmup 3 --tsv)
  o_ms=() r_ms=() v_ms=() o_rss=0 r_rss=0 o_loop=() r_loop=()
  # A decoding step is timed as a generation loop runs it: onnxc keeps the KV cache in its session
  # and reads each past in place (--keep-cache); ONNX Runtime runs through I/O binding, its inputs
  # and outputs bound once (--bind), and writes each present whole from its past.
  [[ $name == *_step || $name == *_step_stacked ]] && o_loop=(--keep-cache) r_loop=(--bind)
  for ((i = 0; i < ROUNDS; i++)); do  # alternate, so both see the same machine state
    read -r m _ _ rss _ < <("$ONNXC" bench "$lib" "${args[@]}" "${o_loop[@]}")
    o_ms+=("$m"); (( rss > o_rss )) && o_rss=$rss
    read -r m _ _ rss _ < <("$PEER_PY" "$HERE/peers/bench_peer.py" "$(ort_model_of "$name")" "${args[@]}" "${r_loop[@]}")
    r_ms+=("$m"); (( rss > r_rss )) && r_rss=$rss
    if (( OPENVINO )) && [[ $name != *_int8 ]]; then
      read -r m _ _ _ _ < <("$PEER_PY" "$HERE/peers/bench_peer.py" "$MODELS/$name.onnx" --engine openvino "${args[@]}")
      v_ms+=("$m")
    fi
  done
  om=$(printf '%s\n' "${o_ms[@]}" | median)
  rm_=$(printf '%s\n' "${r_ms[@]}" | median)
  ONNXC_MS[$name|$label]=$om ORT_MS[$name|$label]=$rm_
  # The lowest and highest ratio of one round's pair: how much the machine moved during the row.
  range=$(paste <(printf '%s\n' "${o_ms[@]}") <(printf '%s\n' "${r_ms[@]}") |
    awk 'NR == 1 || $1 / $2 < lo {lo = $1 / $2} NR == 1 || $1 / $2 > hi {hi = $1 / $2} END {printf "%.2f-%.2f", lo, hi}')
  awk -v n="$name" -v s="$label" -v t="$THREADS" -v om="$om" -v rm="$rm_" -v orss="$o_rss" -v rrss="$r_rss" \
      -v range="$range" -v cold="${CC_COLD[$name]:--}" -v warm="${CC_WARM[$name]}" -v ccrss="${CC_RSS[$name]}" 'BEGIN {
    printf "%-19s %-17s %3d %10.2f %10.2f %7.2f %11s %9.0f %9.0f %9s %9s %9.0f", n, s, t, om, rm, om / rm, range,
           orss / 1048576, rrss / 1048576, cold, warm, ccrss / 1024 }'
  if (( ${#v_ms[@]} )); then
    vm=$(printf '%s\n' "${v_ms[@]}" | median)
    awk -v om="$om" -v vm="$vm" 'BEGIN { printf " %9.2f %7.2f", vm, om / vm }'
  fi
  echo
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
# int8 rows: latency against ORT's float32 run of the same model (when its row ran), and the error
# of both int8 results against the float32 reference outputs models.py wrote.
norm_rel() { grep -oE 'norm rel err [0-9.e+-]+' | head -1 | awk '{print $4}'; }
for row in "${ROWS[@]}"; do
  IFS='|' read -r name label _ <<<"$row"
  [[ $name == *_int8 ]] || continue
  fp="$(model_of "$name")|$label" data=$MODELS/$(model_of "$name")_data
  vs_fp32=-
  [[ -n ${ORT_MS[$fp]:-} ]] &&
    vs_fp32=$(awk -v a="${ONNXC_MS[$name|$label]}" -v b="${ORT_MS[$fp]}" 'BEGIN {printf "%.2f", a / b}')
  o_err=$({ "$ONNXC" compare "$LIBS/$name/lib$name.so" "$data" 2>/dev/null || true; } | awk 'h {print $4; exit} $1 == "output" && /norm rel err/ {h = 1}')
  r_err=$({ "$PEER_PY" "$HERE/peers/check_ort.py" "$(ort_model_of "$name")" "$data" 2>/dev/null || true; } | norm_rel || true)
  echo "$name: onnxc int8 / ORT fp32 latency $vs_fp32; error against float32 (norm-relative): onnxc ${o_err:--}, ORT int8 ${r_err:--}"
done
