#!/usr/bin/env bash
# BERT-base-like encoder (bench/models.py `bert`) on the GPU with each CUDA GEMM form
# (ONNXC_CUDA_GEMM): compiled for --target cuda, compared with torch's outputs, timed at b1/b8 s128
# (median of 20 runs, inputs in and outputs out). The companion of gemm_variants.sh, for the same short
# call on a lent GPU machine; keeps within BERT_SECONDS (120 by default).
#
#   bench/gpu/bert_variants.sh OUT [VARIANT...]      (default: smem128 reg128k4 reg64k4 reg128)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: bench/gpu/bert_variants.sh OUT [VARIANT...]}
shift
VARIANTS=${*:-smem128 reg128k4 reg64k4 reg128}
mkdir -p "$OUT"
LIMIT=${BERT_SECONDS:-120}
left() { local l=$((LIMIT - SECONDS)); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
P=/tmp/onnxc-gpu
[ -x $P/bin/onnxc ] || { mkdir -p $P && tar -C $P -xJf .gpu/onnxc.tar.xz; } || exit 1
ONNXC=$P/bin/onnxc
M=$P/models
if [ ! -f $M/bert.onnx ]; then
  ONNXC_EXPORTER=${ONNXC_EXPORTER:-dynamo} timeout "$(left 60)" python3 bench/models.py $M bert > "$OUT/bert_export.log" 2>&1 ||
    { echo "bert_variants: export failed"; tail -3 "$OUT/bert_export.log"; exit 1; }
fi
for v in $VARIANTS; do
  ONNXC_CUDA_GEMM=$v ONNXC_CACHE_DIR=$P/cache_v_$v timeout "$(left 60)" $ONNXC compile $M/bert.onnx --target cuda -o $P/bert_v_$v -q \
    > "$OUT/compile_$v.log" 2>&1 &
done
wait
printf "variant\tvalues\tb1s128_ms\tb8s128_ms\n" | tee "$OUT/bert_variants.tsv"
for v in $VARIANTS; do
  LIB=$P/bert_v_$v/libbert.so
  [ -f "$LIB" ] || { printf "%s\tcompile failed: %s\n" "$v" "$(tail -1 "$OUT/compile_$v.log")" | tee -a "$OUT/bert_variants.tsv"; continue; }
  c=$(timeout "$(left 30)" $ONNXC compare "$LIB" $M/bert_data/test_data_set_0 --rtol 1e-3 --atol 1e-4 > "$OUT/compare_$v.txt" 2>&1 && echo ok || echo DIFF)
  t1=$(timeout "$(left 30)" $ONNXC bench "$LIB" --dims batch=1,seq=128 --runs 20 --warmup 3 --tsv 2>&1 | tail -1 | cut -f1)
  t8=$(timeout "$(left 30)" $ONNXC bench "$LIB" --dims batch=8,seq=128 --runs 20 --warmup 3 --tsv 2>&1 | tail -1 | cut -f1)
  printf "%s\t%s\t%s\t%s\n" "$v" "$c" "$t1" "$t8" | tee -a "$OUT/bert_variants.tsv"
done
