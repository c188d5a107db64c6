#!/usr/bin/env bash
# Runs the libFuzzer targets of the sanitizer build (scripts/sanitize.sh builds them).
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# CI runs a fixed 20,000 inputs per target from seed 1 (FUZZ_RUNS=20000: the same smoke run every
# time). A longer run by hand, e.g. an hour each:
#   scripts/fuzz.sh 3600
# Corpora are seeded from the ONNX backend test data and kept in $BUILD/fuzz-corpus/TARGET, so each
# run starts where the last stopped; a finding is written to $BUILD/fuzz-findings/ and fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${ONNXC_ASAN_BUILD_DIR:-build-asan}"
SECS="${1:-10}"
shift || true
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=(fuzz_onnx_loader fuzz_tensor_pb fuzz_npy fuzz_model_desc fuzz_ir_text)
DATA=/usr/share/libonnx-testdata/data
CORPUS="$BUILD/fuzz-corpus"
FINDINGS="$BUILD/fuzz-findings"
mkdir -p "$FINDINGS"
source scripts/sanitizer_env.sh

# seed TARGET FILE...: copies the files (under 64 KiB) into the target's corpus once.
seed() {
  local dir="$CORPUS/$1" k=0 f
  shift
  [[ -d $dir ]] && return
  mkdir -p "$dir"
  for f in "$@"; do
    [[ -f $f && $(stat -c %s "$f") -lt 65536 ]] || continue
    cp "$f" "$dir/seed_$((k++))"
  done
}

# Every 8th backend test: a spread of ops, opsets, dtypes and attribute kinds.
mapfile -t models < <(ls -d "$DATA"/node/*/ 2>/dev/null | awk 'NR % 8 == 1')
seed fuzz_onnx_loader "${models[@]/%//model.onnx}" tests/tools/data/unsupported_op.onnx
seed fuzz_tensor_pb "${models[@]/%//test_data_set_0/input_0.pb}" "${models[@]/%//test_data_set_0/output_0.pb}"
seed fuzz_npy tests/tools/data/*.npy
mkdir -p "$CORPUS/fuzz_model_desc"
if [[ ! -d $CORPUS/fuzz_ir_text ]]; then
  mkdir -p "$CORPUS/fuzz_ir_text"
  for m in "${models[@]:0:20}"; do
    "$BUILD/tools/onnxc" inspect "$m/model.onnx" --ir 2>/dev/null | sed -n '/^graph /,$p' \
      >"$CORPUS/fuzz_ir_text/$(basename "$m").ir" || true
  done
fi

# FUZZ_RUNS=N (CI's smoke run): N inputs per target from a fixed seed instead of SECS seconds, so
# the run is the same every time: a finding is a regression, never a dice roll.
if [[ -n ${FUZZ_RUNS:-} ]]; then budget=(-runs="$FUZZ_RUNS" -seed=1); what="$FUZZ_RUNS inputs (seed 1)"
else budget=(-max_total_time="$SECS"); what="${SECS} s"; fi

status=0
for t in "${TARGETS[@]}"; do
  echo "fuzz: $t for $what"
  if ! "$BUILD/tests/fuzz/$t" "$CORPUS/$t" "${budget[@]}" -max_len=65536 -timeout=20 \
      -rss_limit_mb=4096 -artifact_prefix="$FINDINGS/$t-" -print_final_stats=1 >"$FINDINGS/$t.log" 2>&1; then
    echo "fuzz: $t FOUND A PROBLEM (input saved under $FINDINGS):"
    grep -E 'ERROR|SUMMARY|==[0-9]+==|runtime error|Test unit written' "$FINDINGS/$t.log" | head -20 || true
    status=1
  fi
  grep -E '^stat::number_of_executed_units|^stat::new_units_added' "$FINDINGS/$t.log" | tr '\n' ' ' || true
  echo
done
exit $status
