#!/usr/bin/env bash
# Times each CUDA GEMM form (ONNXC_CUDA_GEMM, codegen/schedule/gpu_gemm.h) on three products with a
# bias (the ones a BERT-base encoder at batch 8, seq 128 spends its time in, and a square one) beside
# PyTorch eager (float32, TF32 off) on the same GPU in the same call. Made for one short call on a
# lent GPU machine: the whole script keeps within GEMM_SECONDS (90 by default).
#
#   bench/gpu/gemm_variants.sh OUT [ONNXC]
# ONNXC: the onnxc CLI (default: the pack from bench/gpu/pack.sh, unpacked into /tmp/onnxc-gpu, else
# build/tools/onnxc). VARIANTS="smem128 reg128 ..." picks forms (default: all). The models are made
# here with python3's onnx (never carried: the device transfer is limited). Without a GPU the
# libraries still compile for cuda and their runs are refused with the driver's message.
#
# Writes OUT/gemm_variants.tsv (one row per product and form) and prints it as a table:
#   run ms      median of 20 runs of `onnxc bench` (input copied to the GPU and output back each run)
#   gpu ms      all kernels' GPU time per run
#   gemm ms     the GEMM kernel's GPU time per run (`onnxc bench --profile`: a device wait after each step)
#   GFLOP/s     2·m·k·n / gemm ms (the bias is not counted)
#   values      `onnxc compare` against x·W + b computed in float64 (ok or DIFF)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: bench/gpu/gemm_variants.sh OUT [ONNXC]}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
START=$(date +%s)
LIMIT=${GEMM_SECONDS:-90}
left() { echo $((LIMIT - ($(date +%s) - START))); }
P=/tmp/onnxc-gpu
ONNXC=${2:-}
if [ -z "$ONNXC" ]; then
  if [ -f .gpu/onnxc.tar.xz ] && [ ! -x $P/bin/onnxc ]; then mkdir -p $P && tar -C $P -xJf .gpu/onnxc.tar.xz; fi
  if [ -x $P/bin/onnxc ]; then ONNXC=$P/bin/onnxc; else ONNXC=build/tools/onnxc; fi
fi
[ -x "$ONNXC" ] || { echo "gemm_variants: no onnxc at $ONNXC" >&2; exit 1; }
VARIANTS=${VARIANTS:-smem128 tile64 reg64 reg64k4 reg128 reg128k4 reg128x128}
# A python3 with numpy and onnx (and, for the peer, torch with CUDA).
PY=${PYTHON:-}
if [ -z "$PY" ]; then
  for c in python3 /usr/bin/python3; do
    if command -v "$c" >/dev/null && "$c" -c "import onnx, numpy" 2>/dev/null; then PY=$c; break; fi
  done
fi
[ -n "$PY" ] || { echo "gemm_variants: no python3 with numpy and onnx (set PYTHON)" >&2; exit 1; }
W=$(mktemp -d /tmp/gemm_variants.XXXX)
trap 'rm -rf "$W"' EXIT
echo "gemm_variants: onnxc $ONNXC, forms: $VARIANTS, limit ${LIMIT}s"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

# The products: name M K N (x[M,K] · W[K,N] + b[N], W and b constants).
export PRODUCTS="ffn1 1024 768 3072
ffn2 1024 3072 768
sq 2048 2048 2048"
"$PY" - "$W" <<'PY' || { echo "gemm_variants: $PY cannot make the models (needs numpy and onnx)" >&2; exit 1; }
import os
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
for line in os.environ["PRODUCTS"].splitlines():
    name, m, k, n = line.split(); m, k, n = int(m), int(k), int(n)
    r = np.random.default_rng(0)
    w = numpy_helper.from_array((r.standard_normal((k, n)) * 0.02).astype(np.float32), "W")
    b = numpy_helper.from_array((r.standard_normal((n,)) * 0.02).astype(np.float32), "b")
    g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["t"]), helper.make_node("Add", ["t", "b"], ["y"])],
                          name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], [w, b])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, f"{sys.argv[1]}/{name}.onnx")
    # One test-data set: x and x·W + b in float64, rounded once.
    x = r.standard_normal((m, k)).astype(np.float32)
    y = (x.astype(np.float64) @ numpy_helper.to_array(w).astype(np.float64) + numpy_helper.to_array(b)).astype(np.float32)
    os.makedirs(f"{sys.argv[1]}/{name}_data", exist_ok=True)
    for i, (t, tn) in enumerate([(x, "x")]):
        open(f"{sys.argv[1]}/{name}_data/input_{i}.pb", "wb").write(numpy_helper.from_array(t, tn).SerializeToString())
    open(f"{sys.argv[1]}/{name}_data/output_0.pb", "wb").write(numpy_helper.from_array(y, "y").SerializeToString())
PY

# Every (form, product) compiled at once; each form has its own kernel cache directory too (the
# cache also keys on the form).
compile_one() {  # FORM PRODUCT
  ONNXC_CUDA_GEMM=$1 ONNXC_CACHE_DIR=$W/cache_$1 timeout "$CT" "$ONNXC" compile "$W/$2.onnx" --target cuda \
    -o "$W/$1_$2" -q > "$W/$1_$2.compile.log" 2>&1 || echo "compile $1 $2 failed: $(tail -2 "$W/$1_$2.compile.log")"
}
export -f compile_one
export W ONNXC
export CT=$(( $(left) / 2 ))
for v in $VARIANTS; do
  echo "$PRODUCTS" | while read -r name m k n; do echo "$v $name"; done
done | xargs -P "$(nproc)" -L 1 bash -c 'compile_one "$@"' _
echo "gemm_variants: compiled in $(( $(date +%s) - START )) s"

TSV=$OUT/gemm_variants.tsv
printf "product\tm\tk\tn\tform\trun_ms\tgpu_ms\tgemm_ms\tGFLOP/s\tvalues\tnote\n" > "$TSV"
for v in $VARIANTS; do
  echo "$PRODUCTS" | while read -r name m k n; do
    lib=$W/${v}_$name/lib$name.so
    note=
    run=- gpu=- gemm=- gf=- values=-
    if [ ! -f "$lib" ]; then
      note="not compiled"
    elif [ "$(left)" -lt 8 ]; then
      note="out of time"
    else
      log=$W/${v}_$name.bench.log
      timeout $(( $(left) < 20 ? $(left) : 20 )) "$ONNXC" bench "$lib" --runs 20 --warmup 3 --profile > "$log" 2>&1
      rc=$?
      run=$(awk '/^latency/ {print $3; exit}' "$log")
      # Profile rows: ms/run share calls GFLOP/s ...; the GEMM's is the one naming MatMul.
      gpu=$(awk '/ms\/run/ {on = 1; next} on && NF > 6 {s += $1} END {if (on) printf "%.4f", s}' "$log")
      gemm=$(awk '/ms\/run/ {on = 1; next} on && /MatMul/ {print $1; exit}' "$log")
      [ -n "$gemm" ] && gf=$(awk -v m="$m" -v k="$k" -v n="$n" -v t="$gemm" 'BEGIN {printf "%.0f", 2 * m * k * n / (t * 1e6)}')
      [ $rc -ne 0 ] && note="bench rc=$rc: $(tail -1 "$log" | cut -c1-160)"
      # The values against float64 numpy (tolerances well above f32 rounding over k, far below a
      # wrong tile: |y| is about 0.5).
      if [ $rc -eq 0 ] && [ "$(left)" -gt 15 ]; then
        if timeout 15 "$ONNXC" compare "$lib" "$W/${name}_data" --rtol 1e-4 --atol 1e-4 > "$log.cmp" 2>&1; then values=ok
        else values=DIFF note="$note $(grep -m1 -i 'mismatch\|error' "$log.cmp" | cut -c1-160)"; fi
      fi
      run=${run:--} gpu=${gpu:--} gemm=${gemm:--}
    fi
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$name" "$m" "$k" "$n" "$v" "$run" "$gpu" "$gemm" "$gf" "$values" "${note:--}" >> "$TSV"
  done
done

# PyTorch eager: addmm (the same product and bias), float32, TF32 off, CUDA events around 20 runs.
if [ "$(left)" -gt 5 ]; then
  timeout "$(left)" "$PY" - >> "$TSV" 2> "$OUT/gemm_variants_torch.log" <<'PY'
import os
import sys
try:
    import torch
except ImportError:
    sys.exit("no torch")
if not torch.cuda.is_available():
    sys.exit("torch: no CUDA device")
torch.backends.cuda.matmul.allow_tf32 = False
for line in os.environ["PRODUCTS"].splitlines():
    name, m, k, n = line.split(); m, k, n = int(m), int(k), int(n)
    x = torch.randn(m, k, device="cuda"); w = torch.randn(k, n, device="cuda"); b = torch.randn(n, device="cuda")
    for _ in range(3):
        torch.addmm(b, x, w)
    times = []
    for _ in range(20):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); torch.addmm(b, x, w); e.record(); torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    t = sorted(times)[len(times) // 2]
    print(f"{name}\t{m}\t{k}\t{n}\ttorch\t-\t{t:.4f}\t{t:.4f}\t{2 * m * k * n / (t * 1e6):.0f}\t-\ttorch {torch.__version__} addmm")
PY
  [ $? -eq 0 ] || echo "gemm_variants: torch skipped: $(tail -1 "$OUT/gemm_variants_torch.log")"
else
  echo "gemm_variants: torch skipped (out of time)"
fi

column -t -s $'\t' "$TSV"
echo "gemm_variants: done in $(( $(date +%s) - START )) s"
