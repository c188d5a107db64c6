#!/usr/bin/env bash
# The GPU check of issue 25, in one call on a GPU machine (one H100/H200 lent for minutes): unpacks the
# onnxc build that bench/gpu/pack.sh made here, then, each stage under its own time limit and each
# writing under OUT:
#   env          the GPU, its driver, the compilers and torch that the machine has
#   models       every bundled test model and fusion model compiled for --target cuda and compared
#                with its reference outputs (models.tsv)
#   conformance  the ONNX 1.12 backend tests on --target cuda (conformance_cuda.tsv) and the tests
#                that pass on the CPU (tests/conformance/expected_pass.txt) but not here, with reasons
#   bisect       models packed with their intermediate values as outputs (pack.sh) compared on cuda:
#                the first that differs from the CPU's names the stage (bisect_NAME.txt)
#   ceilings     the GPU's float32 product rate (TF32 off) and copy bandwidth, measured through torch
#   bert         bench/models.py's BERT-base-like encoder: compared with torch's outputs, then timed at
#                b1/b8 x s128/s512 beside PyTorch eager on the same GPU (bert.tsv, bert_profile.txt)
#   attention    the fused attention alone, 12 heads of 64, beside torch's scaled_dot_product_attention
#                (attention.tsv), and which CUDA form each build compiled it to (attention_form.tsv:
#                streaming, one kernel with the scores on chip, or materialized)
#   device       the C API's device path (bench/gpu/device_io.c): the bundled encoder layer run with
#                inputs in device memory, kernels on a stream of the caller's, outputs read on the device
#                and through the lazy copy, and with the context named, each compared with the host
#                path's outputs at three shapes (device_io.txt)
# and last prints summary.md (bench/gpu/summary.py). A stage that fails says so and the next one runs.
#
#   bench/gpu/check.sh OUT [--quick] [--stages env,models,...]
# --quick: fewer shapes and a sample of the conformance tests (a first smoke run).
# Environment: MODELS (a regex: only the test model folders it matches), CONFORMANCE_FILTER (a regex
# for test-suite --filter), CONFORMANCE_JOBS (default nproc), CONFORMANCE_SECONDS (default 150).
# The whole call keeps within CHECK_SECONDS (default 450: 7.5 minutes, for a device call of 8 to 10):
# each stage's limit is cut to what is left, and a stage with under 20 s left is skipped, saying so.
# Without a GPU (no nvidia-smi, or it lists none) the stages that need one say SKIPPED and why; the
# rest (the environment, compiling the BERT and attention libraries for --target cuda, and one run
# that must be refused with the driver's message) still runs, so the script is checked up to the GPU.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${1:?usage: bench/gpu/check.sh OUT [--quick] [--stages LIST]}
shift
QUICK=0
STAGES=env,device,models,conformance,bisect,ceilings,bert,attention
while [ $# -gt 0 ]; do
  case $1 in
    --quick) QUICK=1 ;;
    --stages) STAGES=$2; shift ;;
    *) echo "check.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$OUT"
: > "$OUT/skipped.txt"
PACK=${ONNXC_GPU_PACK:-/tmp/onnxc-gpu}
ONNXC=$PACK/bin/onnxc
export ONNXC_CACHE_DIR=$PACK/cache PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
JOBS=$(nproc)
log() { echo "[$(date -u +%T) +${SECONDS}s] $*"; }
want() { case ",$STAGES," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
BUDGET=${CHECK_SECONDS:-450}
# left N: the seconds a step may take, N or what is left of the budget (less a margin for the summary).
left() { local l=$((BUDGET - SECONDS - 15)); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
# stage NAME [MIN]: true when NAME is wanted and at least MIN (20) seconds are left; says why not.
stage() {
  want "$1" || return 1
  if [ "$(left 100000)" -lt "${2:-20}" ]; then
    log "$1: SKIPPED (the ${BUDGET} s budget is spent)" | tee -a "$OUT/skipped.txt"
    return 1
  fi
}
# The GPU: nvidia-smi must list one. Without it the stages that time or compare on the device skip.
if ! command -v nvidia-smi > /dev/null; then
  GPU= NO_GPU="nvidia-smi not found"
else
  GPU=$(nvidia-smi -L 2>&1 | grep -m1 '^GPU ') NO_GPU="nvidia-smi lists no GPU: $(nvidia-smi -L 2>&1 | head -1)"
fi
needs_gpu() {
  [ -n "$GPU" ] && return 0
  log "$1: SKIPPED (no GPU here: $NO_GPU)" | tee -a "$OUT/skipped.txt"
  return 1
}

if [ ! -x "$ONNXC" ]; then
  [ -f .gpu/onnxc.tar.xz ] || { echo "check.sh: .gpu/onnxc.tar.xz missing: run bench/gpu/pack.sh first" >&2; exit 1; }
  mkdir -p "$PACK"
  tar -C "$PACK" -xJf .gpu/onnxc.tar.xz && tar -C "$PACK" -xJf .gpu/testdata.tar.xz || { echo "check.sh: unpacking failed" >&2; exit 1; }
fi
log "unpacked onnxc into $PACK"

log "GPU: ${GPU:-none ($NO_GPU)}"
if stage env; then
  {
    [ -n "$GPU" ] && nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem --format=csv 2>&1
    [ -z "$GPU" ] && echo "gpu: none ($NO_GPU)"
    echo "gcc: $(gcc --version 2>&1 | head -1)"
    echo "ld: $(ld --version 2>&1 | head -1)"
    echo "onnxc: $("$ONNXC" --version 2>&1 | head -1)"
    echo "torch: $($PY -c 'import torch; print(torch.__version__, torch.cuda.get_device_name(0))' 2>&1 | tail -1)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) x $JOBS"
    echo "date: $(date -u +%FT%TZ)"
  } | tee "$OUT/env.txt"
fi

if stage device; then
  log "device: device pointers and a caller's stream on the encoder layer (onnxc-device-io)"
  E=$PACK/device
  if ! timeout "$(left 150)" "$ONNXC" compile tests/models/encoder_layer/model.onnx --target cuda -o "$E" -n encoder -q \
      > "$OUT/device_compile.log" 2>&1; then
    log "device: compiling the encoder layer for cuda failed: $(tail -1 "$OUT/device_compile.log")"
  else
    # Shapes small, large (the arena grows), then small again (it is reused).
    timeout "$(left 90)" "$PACK/bin/onnxc-device-io" "$E/libencoder.so" batch=1,seq=7 batch=3,seq=64 batch=2,seq=5 \
      > "$OUT/device_io.txt" 2>&1
    rc=$?
    log "device: exit $rc: $(tail -1 "$OUT/device_io.txt")"
    grep -E 'DIFFERS|failed' "$OUT/device_io.txt" | head -20
    [ -z "$GPU" ] && needs_gpu "device (run: refused without a driver, as above)"
  fi
fi

if stage models && needs_gpu models; then
  log "models: compare on --target cuda"
  : > "$OUT/models.tsv"
  # Each model at the tolerance its ctest uses: a fusion model's manifest row (rtol,atol in the last
  # column, e.g. 2e-2,2e-2 for the fp16 exports against the fp32 outputs) or fusion_test.sh's 1e-4,1e-5;
  # the other test models at onnxc compare's defaults (1e-3, 1e-7), as tests/models does.
  tol_for() {
    local name=${1#tests/models/fusion/} row tol
    [ "$name" = "$1" ] && { echo "1e-3 1e-7"; return; }
    row=$(grep -h -m1 -E "^$name[[:space:]]" tests/models/fusion/manifest.txt tests/models/fusion/hf_manifest.txt 2> /dev/null)
    tol=$(echo "$row" | awk '{print $NF}')
    case $tol in *,*) echo "${tol%,*} ${tol#*,}" ;; *) echo "1e-4 1e-5" ;; esac
  }
  for d in tests/models/*/ tests/models/*/*/; do
    [ -f "$d/model.onnx" ] && ls -d "$d"/test_data_set_* >/dev/null 2>&1 && echo "${d%/}"
  done | grep -E -- "${MODELS:-.}" | while read -r d; do echo "$d $(tol_for "$d")"; done |
    xargs -P "$JOBS" -L1 sh -c '
      # Classified by the exit status of onnxc compare (0: every data set matches); the reason shown
      # is the line that says what differs or failed, else the last line (a table row when all match).
      r=$(timeout "$1" "$0" compare "$2" --target cuda --rtol "$3" --atol "$4" 2>&1); rc=$?
      [ $rc -eq 0 ] && s=pass || s=FAIL
      why=$(printf "%s\n" "$r" | grep -m1 -E "error|differs|timed out") || why=$(printf "%s\n" "$r" | tail -1)
      [ $rc -eq 124 ] && why="timed out after $1 s"
      printf "%s\t%s\t%s (rtol %s, atol %s)\n" "$2" "$s" "$why" "$3" "$4"' "$ONNXC" "$(left 120)" >> "$OUT/models.tsv"
  sort -o "$OUT/models.tsv" "$OUT/models.tsv"
  log "models: $(grep -c $'\tpass\t' "$OUT/models.tsv") of $(wc -l < "$OUT/models.tsv") match"
  grep -v $'\tpass\t' "$OUT/models.tsv" | head -20
fi

if stage conformance && needs_gpu conformance; then
  log "conformance: ONNX 1.12 backend tests on --target cuda"
  TD=$PACK/data
  FILTER=()
  [ $QUICK = 1 ] && FILTER=(--filter '^test_(add|mul|matmul|gemm|softmax|relu|conv|reduce_mean|layer_normalization|gelu|transpose|concat|gather|slice|cast)')
  [ -n "${CONFORMANCE_FILTER:-}" ] && FILTER=(--filter "$CONFORMANCE_FILTER")
  # Each result is logged as it finishes: if the time limit stops the run, the log still counts.
  timeout "$(left "${CONFORMANCE_SECONDS:-150}")" "$ONNXC" test-suite "$TD/node" "$TD/pytorch-converted" "$TD/pytorch-operator" "$TD/simple" \
    --target cuda --jobs "${CONFORMANCE_JOBS:-$JOBS}" --threads 1 --timeout 60 "${FILTER[@]}" \
    --tsv "$OUT/conformance_cuda.tsv" > "$OUT/conformance_cuda.log" 2>&1 || log "conformance: stopped at its time limit"
  tail -1 "$OUT/conformance_cuda.log"
  $PY bench/gpu/summary.py conformance-diff "$OUT/conformance_cuda.log" tests/conformance/expected_pass.txt \
    > "$OUT/conformance_diff.txt"
  head -3 "$OUT/conformance_diff.txt"
fi

# Models that differ on the GPU, with their intermediate values as outputs too and references from
# the CPU (pack.sh writes them with bench/gpu/bisect_model.py): the first output in graph order
# that differs names the stage to look at.
if stage bisect && needs_gpu bisect; then
  for d in "$PACK"/bisect/*/; do
    [ -f "$d/model.onnx" ] || continue
    n=$(basename "$d")
    log "bisect: $n on --target cuda"
    # At the fusion models' tolerance: FMA-level differences stay quiet, a wrong stage does not.
    timeout "$(left 120)" "$ONNXC" compare "$d/model.onnx" "$d/test_data_set_0" --target cuda --rtol 1e-4 --atol 1e-5 \
      --worst 3 > "$OUT/bisect_$n.txt" 2>&1
    log "bisect: $n: exit $?; the outputs that differ, in graph order:"
    grep -vE ' ok$' "$OUT/bisect_$n.txt" | head -16
  done
fi

if stage ceilings && needs_gpu ceilings; then
  log "ceilings: float32 product and copy bandwidth through torch"
  timeout "$(left 60)" $PY bench/gpu/torch_peer.py ceilings | tee "$OUT/ceilings.txt"
fi

SHAPES="1 128 8 128 1 512 8 512"
[ $QUICK = 1 ] && SHAPES="1 128 8 128"
# The builds to time: onnxc, and onnxc-base when pack.sh packed one (each with its own kernel cache).
BUILDS=onnxc
[ -x "$PACK/bin/onnxc-base" ] && BUILDS="onnxc onnxc-base"
if stage bert; then
  log "bert: export (torch), compile (--target cuda), compare, time"
  M=$PACK/models
  # torch 2.x's TorchScript exporter bakes the traced sequence length into nn.MultiheadAttention's
  # reshapes (onnxc refuses such a model at any other length): the dynamo exporter keeps it symbolic.
  ONNXC_EXPORTER=${ONNXC_EXPORTER:-dynamo} timeout "$(left 180)" $PY bench/models.py "$M" bert > "$OUT/bert_export.log" 2>&1 || { log "bert: export failed"; tail -5 "$OUT/bert_export.log"; }
  : > "$OUT/bert.tsv"
  for B in $BUILDS; do
    [ -f "$M/bert.onnx" ] || break
    LIB=$PACK/bert_$B/libbert.so
    ONNXC_CACHE_DIR=$PACK/cache_$B timeout "$(left 240)" "$PACK/bin/$B" compile "$M/bert.onnx" --target cuda -o "$PACK/bert_$B" --stats > "$OUT/bert_compile_$B.log" 2>&1
    tail -2 "$OUT/bert_compile_$B.log"
    if [ -z "$GPU" ]; then  # compiled without a GPU; running must be refused with the driver's message
      "$PACK/bin/$B" bench "$LIB" --dims batch=1,seq=128 --runs 1 --warmup 0 > "$OUT/bert_no_gpu_$B.txt" 2>&1
      log "bert: run without a GPU exited $? with: $(tail -1 "$OUT/bert_no_gpu_$B.txt")"
      needs_gpu "bert (compare and timing)"
      continue
    fi
    timeout "$(left 120)" "$PACK/bin/$B" compare "$LIB" "$M/bert_data/test_data_set_0" --rtol 1e-3 --atol 1e-4 2>&1 | tail -3 | tee "$OUT/bert_compare_$B.txt"
    set -- $SHAPES
    while [ $# -ge 2 ]; do
      r=$(timeout "$(left 120)" "$PACK/bin/$B" bench "$LIB" --dims batch=$1,seq=$2 --runs 30 --warmup 5 --tsv 2>&1 | tail -1)
      printf "%s\t%s\t%s\t%s\n" "$B" "$1" "$2" "$r" | tee -a "$OUT/bert.tsv"
      shift 2
    done
    # Per-step GPU time: a CUDA library waits for the device after every step while profiled.
    timeout "$(left 120)" "$PACK/bin/$B" bench "$LIB" --dims batch=8,seq=128 --runs 20 --profile > "$OUT/bert_profile_$B.txt" 2>&1
  done
  [ -n "$GPU" ] && [ -f "$M/bert.onnx" ] && timeout "$(left 150)" $PY bench/gpu/torch_peer.py bert $SHAPES 2>"$OUT/torch_bert.err" |
    awk '{printf "torch\t%s\t%s\t%s\n", $2, $3, $4}' | tee -a "$OUT/bert.tsv"
fi

SEQS="512 1024 2048 4096 8192"
[ $QUICK = 1 ] && SEQS="512 2048"
# A base build from before session 12 has the materialized attention: timed beside the streaming one.
ATTENTION_BUILDS=${ATTENTION_BUILDS:-$BUILDS}
if stage attention; then
  log "attention: the fused kernel alone beside torch SDPA"
  A=$PACK/attention
  mkdir -p "$A"
  : > "$OUT/attention.tsv"
  : > "$OUT/attention_form.tsv"
  for s in $SEQS; do
    $PY -c "import sys; sys.path.insert(0, 'bench'); import attention_bench as a, onnx; onnx.save(a.plain_model($s, 12, 64), '$A/sdpa_$s.onnx')" || continue
    for B in $ATTENTION_BUILDS; do
      LIB=$A/lib_${B}_$s/libsdpa.so
      if ! ONNXC_CACHE_DIR=$PACK/cache_$B timeout "$(left 120)" "$PACK/bin/$B" compile "$A/sdpa_$s.onnx" --target cuda -o "$A/lib_${B}_$s" -n sdpa -q > "$A/compile_$s.log" 2>&1; then
        printf "%s\t%s\terror: %s\n" "$B" "$s" "$(tail -1 "$A/compile_$s.log")" | tee -a "$OUT/attention.tsv"
        continue
      fi
      # The streaming kernel's PTX (embedded in the library) names its per-tile stages
      # (attn_block_acc); the materialized form's names its score matrix (attn_dot) instead.
      form=unknown
      grep -aq attn_block_acc "$LIB" && form=streaming
      grep -aq attn_dot "$LIB" && form=materialized
      printf "%s\t%s\t%s\n" "$B" "$s" "$form" >> "$OUT/attention_form.tsv"
      if [ -z "$GPU" ]; then
        r="compiled for cuda ($form); not timed (no GPU)"
      else
        r=$(timeout "$(left 120)" "$PACK/bin/$B" bench "$LIB" --runs 20 --warmup 3 --tsv 2>&1 | tail -1)
      fi
      printf "%s\t%s\t%s\n" "$B" "$s" "$r" | tee -a "$OUT/attention.tsv"
    done
  done
  [ -z "$GPU" ] && needs_gpu "attention (timing)"
  [ -n "$GPU" ] && timeout "$(left 120)" $PY bench/gpu/torch_peer.py sdpa $SEQS 2>"$OUT/torch_sdpa.err" | awk '{printf "torch\t%s\t%s\n", $2, $3}' | tee -a "$OUT/attention.tsv"
fi

log "summary"
$PY bench/gpu/summary.py report "$OUT" | tee "$OUT/summary.md"
