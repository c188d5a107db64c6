#!/bin/sh
# Runs the ONNX 1.23 node tests (opsets up to 28) that expected_pass_1_23.txt names, when the test
# folder exists; otherwise reports the test skipped (exit 77), never passed.
# Usage: run_onnx_node_1_23.sh ONNXC DIR EXPECTED TSV
onnxc=$1 dir=$2 expected=$3 tsv=$4
if [ ! -d "$dir" ]; then
  echo "SKIPPED: $dir does not exist (the ONNX 1.23 node tests, one folder per test); nothing was run"
  exit 77
fi
echo "Running the $(grep -cv '^#' "$expected") tests named in $expected (a fixed sample of the suite;"
echo "the whole suite: $onnxc test-suite $dir --jobs 2 --threads 1 --quiet --tsv FILE)"
exec "$onnxc" test-suite "$dir" --jobs 2 --threads 1 --quiet --only-expected --expect-pass "$expected" --tsv "$tsv"
