#!/usr/bin/env bash
# CLI behaviour tests for the onnxc executable: one function per ctest (tests/tools/CMakeLists.txt).
#   cli_test.sh ONNXC CASE
# Each case runs onnxc in a fresh temporary folder and checks exit status, stdout/stderr text, and
# that failed commands leave no output behind. Exit 0 pass, 1 fail, 77 skip.
set -uo pipefail

ONNXC="$(realpath "$1")"
CASE="$2"
HERE="$(cd "$(dirname "$0")" && pwd)"
DATA="$HERE/data"
ADD="$DATA/add_bcast"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/onnxc-cli-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
# Kernel objects go to a cache private to the test run unless the caller chose one.
export ONNXC_CACHE_DIR="${ONNXC_CACHE_DIR:-$WORK/cache}"

COMMANDS=(compile run compare bench inspect optimize test-suite)

fail() {
  echo "FAIL [$CASE]: $*" >&2
  for f in out err; do
    [[ -s $f ]] && { echo "--- $f:" >&2; head -40 "$f" >&2; }
  done
  exit 1
}

# run_onnxc ARGS...: runs onnxc, stdout -> out, stderr -> err, status -> $rc
run_onnxc() {
  "$ONNXC" "$@" >out 2>err
  rc=$?
}

expect_rc() { [[ $rc -eq $1 ]] || fail "expected exit $1, got $rc (onnxc ${*:2})"; }
expect_out() { grep -qE -- "$1" out || fail "stdout lacks /$1/"; }
expect_err() { grep -qE -- "$1" err || fail "stderr lacks /$1/"; }

# A user error: exit 2 and exactly one stderr line `onnxc CMD: error: ...` containing $2.
expect_user_error() {
  local cmd=$1 needle=$2
  [[ $rc -eq 2 ]] || fail "onnxc $cmd: expected exit 2, got $rc"
  [[ $(wc -l <err) -eq 1 ]] || fail "onnxc $cmd: expected one stderr line, got $(wc -l <err)"
  grep -qF -- "onnxc $cmd: error: " err || fail "onnxc $cmd: stderr is not 'onnxc $cmd: error: ...'"
  grep -qF -- "$needle" err || fail "onnxc $cmd: error does not mention '$needle'"
}

expect_absent() { [[ ! -e $1 ]] || fail "a failed command left $1 behind"; }

# Bad model files every model-reading command must reject cleanly.
make_bad_files() {
  mkdir -p adir
  printf 'this is not an ONNX model\n' >notonnx.onnx
  head -c 60 "$ADD/model.onnx" >truncated.onnx
  : >empty.onnx
}

case_help_main() {
  run_onnxc --help
  expect_rc 0
  expect_out '^Usage: onnxc COMMAND'
  for c in "${COMMANDS[@]}"; do grep -qE "^  $c +[a-z]" out || fail "--help does not list $c"; done
  run_onnxc -h
  expect_rc 0
  run_onnxc help
  expect_rc 0
}

case_version() {
  run_onnxc --version
  expect_rc 0
  grep -qE '^onnxc [0-9]+\.[0-9]+\.[0-9]+$' out || fail "--version prints '$(cat out)'"
}

case_no_args() {
  run_onnxc
  expect_rc 2
  expect_out '^Usage: onnxc'
}

case_unknown_command() {
  run_onnxc frobnicate
  expect_rc 2
  expect_err "^onnxc: error: unknown command 'frobnicate'"
  run_onnxc --frobnicate
  expect_rc 2
  expect_err "unknown option '--frobnicate'"
  run_onnxc help frobnicate
  expect_rc 2
}

case_help_each_command() {
  for c in "${COMMANDS[@]}"; do
    run_onnxc "$c" --help
    expect_rc 0
    head -1 out | grep -q "^Usage: onnxc $c " || fail "onnxc $c --help: first line is '$(head -1 out)'"
    grep -q '^Options:' out || fail "onnxc $c --help has no Options section"
    grep -q -- '--help' out || fail "onnxc $c --help does not list --help"
    [[ -s err ]] && fail "onnxc $c --help wrote to stderr"
    cp out help1
    run_onnxc help "$c"
    expect_rc 0
    cmp -s out help1 || fail "'onnxc help $c' differs from 'onnxc $c --help'"
  done
}

case_unknown_flag_each_command() {
  for c in "${COMMANDS[@]}"; do
    run_onnxc "$c" --bogus-flag x
    expect_rc 2
    head -1 err | grep -qF "onnxc $c: error: unknown option '--bogus-flag'" || fail "onnxc $c: '$(head -1 err)'"
    expect_err "Try 'onnxc $c --help'"
  done
}

case_usage_errors() {
  run_onnxc compile "$ADD/model.onnx"
  expect_rc 2
  expect_err 'missing output folder'
  run_onnxc compile "$ADD/model.onnx" -o
  expect_rc 2
  expect_err "needs a value"
  run_onnxc compile
  expect_rc 2
  expect_err 'missing MODEL'
  run_onnxc bench "$ADD/model.onnx" --runs abc
  expect_rc 2
  expect_err "'abc' is not an integer"
  run_onnxc compare "$ADD/model.onnx" --rtol x
  expect_rc 2
  expect_err "'x' is not a number"
  run_onnxc test-suite "$DATA" --filter '('
  expect_rc 2
  expect_err 'bad regular expression'
  run_onnxc inspect a.onnx b.onnx
  expect_rc 2
  expect_err "unexpected argument 'b.onnx'"
}

# Every model-reading command: missing file, directory, empty, truncated, not ONNX.
case_bad_model_files() {
  make_bad_files
  local bad
  for bad in missing.onnx adir empty.onnx truncated.onnx notonnx.onnx; do
    run_onnxc inspect "$bad"
    expect_user_error inspect "$bad"
    run_onnxc compile "$bad" -o outdir
    expect_user_error compile "$bad"
    expect_absent outdir
    run_onnxc optimize "$bad" -o opt.onnx
    expect_user_error optimize "$bad"
    expect_absent opt.onnx
    run_onnxc run "$bad" -i "x=$ADD/test_data_set_0/input_0.pb" -o runout
    expect_user_error run "$bad"
    expect_absent runout
    run_onnxc bench "$bad" --runs 1
    expect_user_error bench "$bad"
    # compare with a directory looks for model.onnx inside it
    [[ $bad == adir ]] && needle=adir/model.onnx || needle=$bad
    run_onnxc compare "$bad" "$ADD/test_data_set_0"
    expect_user_error compare "$needle"
  done
  ls -A | grep -v -e '^adir$' -e '\.onnx$' -e '^out$' -e '^err$' -e '^cache$' && fail "stray files left behind"
  true
}

case_bad_tensor_files() {
  make_bad_files
  run_onnxc run "$ADD/model.onnx" -i x=missing.pb -i "y=$ADD/test_data_set_0/input_1.pb" -o runout
  expect_user_error run missing.pb
  expect_absent runout
  run_onnxc run "$ADD/model.onnx" -i x=notonnx.onnx -i "y=$ADD/test_data_set_0/input_1.pb" -o runout
  expect_user_error run notonnx.onnx
  expect_absent runout
  printf '\x93NUMPY\x01\x00\x10\x00{"descr": "<f4"' >bad.npy
  run_onnxc run "$ADD/model.onnx" -i x=bad.npy -i "y=$ADD/test_data_set_0/input_1.pb" -o runout
  expect_user_error run bad.npy
  expect_absent runout
  run_onnxc compare "$ADD/model.onnx" adir
  expect_user_error compare adir
  run_onnxc test-suite missing_dir
  expect_user_error test-suite missing_dir
  run_onnxc test-suite adir
  expect_user_error test-suite 'no test folders'
}

case_compile_unsupported_op() {
  run_onnxc compile "$DATA/unsupported_op.onnx" -o outdir
  expect_user_error compile Frobnicate
  expect_absent outdir
  ls -A | grep partial >/dev/null && fail "staging folder left behind"
  run_onnxc inspect "$DATA/unsupported_op.onnx"
  expect_rc 0
  expect_out 'com.example.Frobnicate'
  expect_out 'no lowering'
  true
}

# A target of another architecture is linked with its cross tools; without them, one clear line and
# nothing written.
case_compile_cross_missing_tools() {
  ONNXC_CROSS_PREFIX=no-such-cross- run_onnxc compile "$ADD/model.onnx" -o outdir --target arm64
  expect_user_error compile 'no-such-cross-gcc, which is not installed'
  expect_absent outdir
  run_onnxc compile "$ADD/model.onnx" -o outdir --target riscv-64-linux
  expect_user_error compile '64-bit x86 and ARM only'
  expect_absent outdir
}

# A CUDA library on a machine without the NVIDIA driver: compiled and linked (CI has no GPU), then
# refused when the library is opened, with a message naming the model and what is missing, never a
# crash or a Halide error from inside the first kernel. Where a driver is installed, bench/gpu/check.sh
# is the test instead.
case_cuda_without_driver() {
  if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then echo "SKIP: an NVIDIA driver is installed here"; exit 77; fi
  run_onnxc compile "$ADD/model.onnx" -o cudalib --target cuda -n add -q
  expect_rc 0
  [ -f cudalib/libadd.so ] || fail "no CUDA library written"
  run_onnxc run cudalib/libadd.so --input "a=$ADD/test_data_set_0/input_0.pb" --input "b=$ADD/test_data_set_0/input_1.pb" --output-dir outs
  expect_user_error run "model 'add' was compiled for CUDA, but no NVIDIA driver is installed here"
  run_onnxc compare "$ADD" --target cuda
  expect_user_error compare 'compile for a CPU target to run on this machine'
  # The C API's device path (bench/gpu/device_io.c: device pointers, a caller's stream) is refused the
  # same way, at the open, before any CUDA call.
  if [ -n "${ONNXC_DEVICE_IO:-}" ]; then
    "$ONNXC_DEVICE_IO" cudalib/libadd.so > out 2> err; rc=$?
    expect_rc 2
    grep -q "device-io: refused: .*model 'add' was compiled for CUDA, but no NVIDIA driver is installed here" out ||
      fail "onnxc-device-io did not refuse cleanly: $(cat out err)"
  fi
}

# Concat(past input, new) -> present output: the CPU runs it in place (onnxc.CacheAppend, a host
# step); a CUDA library keeps it a Concat kernel, in `compile --target cuda` and in `test-suite --target
# cuda` alike (test-suite used to run the passes for the host, and CUDA refused the CacheAppend: 12
# test_concat_* node tests were "unsupported" on an H100).
case_concat_inputs_by_target() {
  local c="$DATA/concat_inputs"
  run_onnxc inspect "$c/model.onnx" --passes default --ir
  expect_rc 0
  expect_out 'onnxc\.CacheAppend\(%past, %new\)'
  mkdir -p suite && cp -r "$c" suite/concat_inputs
  run_onnxc test-suite suite
  expect_rc 0
  expect_out 'passed +concat_inputs'
  run_onnxc test-suite suite --target cuda
  grep -q 'CacheAppend' out err && fail "test-suite --target cuda formed a CacheAppend"
  if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
    expect_rc 0
    expect_out 'passed +concat_inputs'
  else
    expect_out 'errored +concat_inputs .*no NVIDIA driver is installed here'
  fi
}

# --quantize dynamic-int8 quantizes where int8 beats float32 (x86 with AVX2: vpmaddwd pairs) and
# elsewhere (x86 below AVX2) keeps the model float32 and says so; :force quantizes anyway (the int8
# kernel then matches at int8 tolerances, the float32 one at the default ones). On AVX2 the int16
# pairs carry wide rows and weights (max abs error 0.008 here; with 8-bit ones it was 0.25).
case_quantize_where_int8_pays() {
  local q="$HERE/../models/quant/matmul_bias_relu"
  run_onnxc compile "$q/model.onnx" -o avx2 --target x86-64-avx2 --quantize dynamic-int8 -q
  expect_rc 0
  grep -q 'left the model float32' err && fail "AVX2 kept the model float32"
  run_onnxc compare avx2/*.so "$q" --rtol 0.005 --atol 0.03
  expect_rc 0
  run_onnxc compile "$q/model.onnx" -o plain --target x86-64-linux-sse41 --quantize dynamic-int8 -q
  expect_rc 0
  expect_err 'left the model float32: on target x86-64-linux-sse41 int8 products are not known to beat float32'
  run_onnxc compare plain/*.so "$q"
  expect_rc 0
  run_onnxc compile "$q/model.onnx" -o forced --target x86-64-linux-sse41 --quantize dynamic-int8:force -q
  expect_rc 0
  grep -q 'left the model float32' err && fail ":force still kept the model float32"
  run_onnxc compare forced/*.so "$q" --rtol 0.05 --atol 0.35
  expect_rc 0
  run_onnxc compile "$q/model.onnx" -o bad --quantize int3
  expect_rc 2
  expect_err "unknown mode 'int3'"
}

# --quantize int4-weights: the products keep 4-bit weights (MatMulNBits) and compare says how far the
# outputs moved from the float32 references; bad settings are usage errors naming what is wrong.
# (K = 70 ends in a partial block; the exact arithmetic is checked in tests/python/check_nbits_ort.py.)
case_quantize_int4_weights() {
  local q="$HERE/../models/quant/matmul_bias_relu"
  run_onnxc optimize "$q/model.onnx" -o q4.onnx --quantize int4-weights
  expect_rc 0
  run_onnxc inspect q4.onnx
  expect_out 'MatMulNBits +1'
  run_onnxc compare "$q/model.onnx" "$q" --quantize int4-weights --rtol 0.5 --atol 2
  expect_rc 0
  expect_out 'quantize int4-weights moved the outputs from the references by [0-9.]+% \(relative L2 norm'
  local moved
  moved=$(sed -nE 's/.*references by ([0-9.]+)%.*/\1/p' out)
  awk -v m="$moved" 'BEGIN { exit !(m > 0.1 && m < 20) }' || fail "int4 weights moved the outputs by $moved%"
  run_onnxc compare "$q/model.onnx" "$q" --quantize int4-weights:block=16:symmetric --rtol 0.5 --atol 3
  expect_rc 0
  run_onnxc compile "$q/model.onnx" -o bad --quantize int4-weights:block=24
  expect_rc 2
  expect_err "block '24' is not a power of two from 16 to 256"
  expect_absent bad
  run_onnxc compile "$q/model.onnx" -o bad --quantize int4-weights:sym
  expect_rc 2
  expect_err "unknown setting 'sym'"
}

case_inspect() {
  run_onnxc inspect "$ADD/model.onnx"
  expect_rc 0
  expect_out '^producer +onnxc tests/tools'
  expect_out '^ir version +8'
  expect_out '^opsets +ai.onnx 17'
  expect_out '^inputs +x +f32\[n,3\]'
  expect_out '^ +y +f32\[3\]'
  expect_out '^outputs +sum +f32\[n,3\]'
  expect_out '^parameters +0 elements'
  expect_out '^ext. data +no'
  expect_out 'Add +1'
  run_onnxc inspect "$ADD/model.onnx" --ir
  expect_rc 0
  expect_out 'Add'
  run_onnxc inspect "$ADD/model.onnx" --passes default --timings
  expect_rc 0
  run_onnxc inspect --list-passes
  expect_rc 0
  expect_out 'default pipeline'
  run_onnxc inspect "$ADD/model.onnx" --dump-after no_such_pass
  expect_user_error inspect no_such_pass
}

case_compile_and_compare() {
  run_onnxc compile "$ADD/model.onnx" -o lib --name addb
  expect_rc 0
  for f in lib/libaddb.so lib/libaddb.a lib/addb.h; do [[ -f $f ]] || fail "compile did not write $f"; done
  expect_out 'kernels'
  ls -A | grep partial >/dev/null && fail "staging folder left behind"
  run_onnxc compare lib/libaddb.so "$ADD"
  expect_rc 0
  expect_out 'compare: 2 of 2 data sets match'
  # The .onnx directly (compiled in a temporary folder), and the model folder form.
  run_onnxc compare "$ADD/model.onnx"
  expect_rc 0
  run_onnxc compare "$ADD" --reference "$ADD/test_data_set_1"
  expect_rc 0
}

# --threads is baked into the descriptor as the library's default thread count.
case_compile_threads() {
  run_onnxc compile "$ADD/model.onnx" -o lib --name addt --threads 3
  expect_rc 0
  expect_out 'threads +3 by default'
  grep -q 'halide_set_error_handler, 3,' lib/addt_plan.c || fail "the plan does not carry 3 default threads"
  run_onnxc compare lib/libaddt.so "$ADD"
  expect_rc 0
}

# --fix-dims makes a symbolic dim a constant: the library takes that size only, and says so.
case_fix_dims() {
  run_onnxc compile "$ADD/model.onnx" -o lib --name addf --fix-dims n=2 -q
  expect_rc 0
  grep -q 'static const char \*const symbols' lib/addf_plan.c && fail "the plan still has symbols after --fix-dims n=2"
  run_onnxc compare lib/libaddf.so "$ADD/test_data_set_0" --rtol 0 --atol 0
  expect_rc 0
  run_onnxc run lib/libaddf.so -i "x=$ADD/test_data_set_1/input_0.pb" -i "y=$ADD/test_data_set_1/input_1.pb"
  expect_user_error run "dim 0 is 5 but the model expects 2"
  run_onnxc compile "$ADD/model.onnx" -o bad --fix-dims m=2
  expect_user_error compile "no input of the model has the symbolic dim 'm' (its inputs' symbols: n)"
  expect_absent bad
  run_onnxc compile "$ADD/model.onnx" -o bad --fix-dims n=0
  expect_user_error compile "n=0 (a size must be >= 1)"
  run_onnxc compile "$ADD/model.onnx" -o bad --fix-dims n
  expect_user_error compile "'n' is not SYM=N"
  run_onnxc run lib/libaddf.so --fix-dims n=2 -i "$ADD/test_data_set_0/input_0.pb" -i "$ADD/test_data_set_0/input_1.pb"
  expect_rc 2
  expect_err "--fix-dims applies when compiling an .onnx model"
  # run, bench and optimize take it too.
  run_onnxc bench "$ADD/model.onnx" --fix-dims n=4 -n 2 -w 1
  expect_rc 0
  expect_out 'x=4x3'
  run_onnxc optimize "$ADD/model.onnx" -o fixed.onnx --fix-dims n=7
  expect_rc 0
  run_onnxc inspect fixed.onnx
  expect_out 'x +f32\[7,3\]'
}

# A reference with one element changed: exit 1, the output named, the element's index listed.
case_compare_perturbed() {
  cp -r "$ADD/test_data_set_1" ref
  # output_0.pb ends with raw_data (the last field serialized): its last 4 bytes are element [4,2].
  local size
  size=$(stat -c %s ref/output_0.pb)
  printf '\x00\x00\x7a\x44' | dd of=ref/output_0.pb bs=1 seek=$((size - 4)) conv=notrunc status=none  # 1000.0f
  run_onnxc compare "$ADD/model.onnx" ref
  expect_rc 1
  expect_out "output 'sum' differs"
  expect_out '\[4,2\] +[-0-9.e]+ +1000'
  expect_out 'MISMATCH'
  expect_err "output 'sum' differs"
  # Loose enough tolerances accept it.
  run_onnxc compare "$ADD/model.onnx" ref --atol 2000
  expect_rc 0
}

case_run_outputs() {
  run_onnxc run "$ADD/model.onnx" -i "x=$DATA/add_bcast_x0.npy" -i "y=$ADD/test_data_set_0/input_1.pb" -o outs
  expect_rc 0
  [[ -f outs/output_0.pb ]] || fail "run did not write outs/output_0.pb"
  expect_out '^sum +f32\[2,3\]'
  # outs as a data set: the .npy-fed output must equal what the .pb inputs give.
  cp "$ADD/test_data_set_0/input_0.pb" "$ADD/test_data_set_0/input_1.pb" outs/
  run_onnxc compare "$ADD/model.onnx" outs --rtol 0 --atol 0
  expect_rc 0
  # Positional inputs, a compiled library, and missing inputs named.
  run_onnxc compile "$ADD/model.onnx" -o lib --name addb -q
  expect_rc 0
  run_onnxc run lib/libaddb.so -i "$ADD/test_data_set_0/input_0.pb" -i "$ADD/test_data_set_0/input_1.pb"
  expect_rc 0
  run_onnxc run lib/libaddb.so -i "x=$ADD/test_data_set_0/input_0.pb" -o outs2
  expect_user_error run "missing inputs (y: f32[3])"
  expect_absent outs2
  run_onnxc run lib/libaddb.so -i "z=$ADD/test_data_set_0/input_0.pb"
  expect_user_error run "input 'z'"
  # A shape the model rejects: the runtime's message, one line.
  run_onnxc run lib/libaddb.so -i "x=$ADD/test_data_set_0/input_1.pb" -i "y=$ADD/test_data_set_0/input_1.pb"
  expect_user_error run "input 'x'"
}

case_optimize() {
  run_onnxc optimize "$ADD/model.onnx" -o opt.onnx
  expect_rc 0
  [[ -f opt.onnx ]] || fail "optimize wrote nothing"
  run_onnxc compare opt.onnx "$ADD"
  expect_rc 0
  run_onnxc optimize "$ADD/model.onnx" -o opt2.onnx --passes no_such_pass
  expect_user_error optimize no_such_pass
  expect_absent opt2.onnx
}

# inspect --fusions on a real export (two causal attentions, two erf GELUs), as text and JSON, and --no-fuse.
case_fusions() {
  local dec="$HERE/../models/decoder_prelayer_causal/model.onnx"
  run_onnxc inspect --fusions "$dec"
  expect_rc 0
  expect_out '^fusions +4 fired, 0 near misses \(attention 2, dequantize_matmul 0, gelu 2, layer_norm 0, rms_norm 0, rotary 0\)'
  expect_out '^fused +sdpa +6 nodes +/layers.0/attn/MatMul_2'
  expect_out '^ +gelu_erf +5 nodes +/layers.0/mlp/mlp.1/Mul_1'
  run_onnxc inspect --fusions --json "$dec"
  expect_rc 0
  expect_out '"gelu": 2'
  expect_out '"rule": "gelu_erf", "family": "gelu", "nodes_replaced": 5'
  expect_out '^ "near_misses": \[\],'
  # --canonical: the canonicalize rules that fired too (the scores' division by 8 as a product by 0.125).
  run_onnxc inspect --fusions --canonical "$dec"
  expect_rc 0
  expect_out '^canonical +2 fired'
  expect_out '^ +div_exact_reciprocal +1 nodes +/layers.0/attn/Div_2'
  run_onnxc inspect --fusions --canonical --json "$dec"
  expect_rc 0
  expect_out '"rule": "div_exact_reciprocal", "family": "canonical", "nodes_replaced": 1'
  run_onnxc inspect --canonical "$dec"
  expect_rc 2
  expect_err "--canonical goes with --fusions"
  run_onnxc inspect --fusions --json --no-fuse gelu,layer_norm "$dec"
  expect_rc 0
  expect_out '"gelu": 0'
  # Usage errors: exit 2, the message, and the hint to --help.
  run_onnxc inspect --fusions --no-fuse gelu,bogus "$dec"
  expect_rc 2
  expect_err "unknown fusion 'bogus' \(known: attention, layer_norm, rms_norm, gelu, rotary, dequantize_matmul\)"
  run_onnxc compile "$dec" -o lib --no-fuse bogus
  expect_rc 2
  expect_err "--no-fuse: unknown fusion 'bogus'"
  expect_absent lib
  # --json alone is the summary (what the Python package's onnxc.inspect reads); not with --ir.
  run_onnxc inspect --json "$dec"
  expect_rc 0
  expect_out '"inputs": \[\{"name": "x", "type": "f32\[batch,seq,[0-9]+\]", "dtype": "f32", "shape": \["batch", "seq", [0-9]+\]\}'
  expect_out '"unsupported": \[\]'
  run_onnxc inspect --json --ir "$dec"
  expect_rc 2
  expect_err "--json goes with the summary or --fusions"
}

# The compiled fused ops (LayerNormalization, RMSNormalization, Gelu) against PyTorch's outputs,
# and the same models compiled with every fusion off.
case_compile_fused() {
  local m
  for m in bert_block_op13 llama_mlp_op14 t5_block_op17; do
    local dir="$HERE/../passes/models/$m"
    run_onnxc compile "$dir/model.onnx" -o "fused_$m" -q
    expect_rc 0
    run_onnxc compare "fused_$m/lib$m.so" "$dir"
    expect_rc 0
    run_onnxc compile "$dir/model.onnx" -o "plain_$m" -q --no-fuse layer_norm,rms_norm,gelu,attention,rotary
    expect_rc 0
    run_onnxc compare "plain_$m/lib$m.so" "$dir"
    expect_rc 0
  done
}

# `onnxc optimize` output is standard ONNX: ONNX Runtime (PyPI, bench/peers) loads it and matches the
# reference outputs, as it does for the original model.
case_optimize_ort() {
  local peers="$HERE/../../bench/peers" py
  py=$("$peers/python.sh" 2>err) || { echo "SKIP: $(cat err)"; exit 77; }
  local m
  for m in "$HERE/../models/encoder_layer" "$HERE/../models/decoder_prelayer_causal" \
           "$HERE/../models/mha_cross_attention" "$HERE/../passes/models/bert_block_op13" \
           "$HERE/../passes/models/llama_mlp_op14" "$HERE/../passes/models/t5_block_op17"; do
    run_onnxc optimize "$m/model.onnx" -o opt.onnx
    expect_rc 0
    expect_out 'opset 23'
    "$py" "$peers/check_ort.py" "$m/model.onnx" "$m" --rtol 1e-4 --atol 1e-5 >out 2>err ||
      fail "ONNX Runtime on the original $m"
    "$py" "$peers/check_ort.py" opt.onnx "$m" --rtol 1e-4 --atol 1e-5 >out 2>err ||
      fail "ONNX Runtime on the optimized $m"
    # By domain, not by bytes: onnxc's internal attributes (`__onnxc_*`, which ONNX Runtime ignores)
    # may name it.
    "$py" -c 'import onnx, sys; sys.exit(any(n.domain.startswith("onnxc") for n in onnx.load(sys.argv[1]).graph.node))' \
      opt.onnx || fail "optimize left an onnxc-domain op in $m"
  done
}

case_bench() {
  run_onnxc bench "$ADD/model.onnx" --runs 5 --warmup 1 --dims n=4
  expect_rc 0
  expect_out '^inputs +x=4x3 y=3'
  expect_out 'median [0-9.]+ ms +p10 [0-9.]+ ms +p90 [0-9.]+ ms'
  expect_out 'peak RSS'
  run_onnxc bench "$ADD/model.onnx" --runs 3 --shapes x=7x3 --tsv
  expect_rc 0
  [[ $(awk -F'\t' '{print NF}' out) == 5 ]] || fail "--tsv does not print 5 fields"
  run_onnxc bench "$ADD/model.onnx" --shapes q=1x3
  expect_user_error bench "no input 'q'"
}

case_test_suite() {
  mkdir -p suite
  cp -r "$ADD" suite/add_ok
  cp -r "$ADD" suite/add_bad
  local size
  size=$(stat -c %s suite/add_bad/test_data_set_0/output_0.pb)
  printf '\x00\x00\x7a\x44' | dd of=suite/add_bad/test_data_set_0/output_0.pb bs=1 seek=$((size - 4)) conv=notrunc status=none
  mkdir -p suite/unsupported/test_data_set_0
  cp "$DATA/unsupported_op.onnx" suite/unsupported/model.onnx
  cp "$ADD/test_data_set_0/input_0.pb" suite/unsupported/test_data_set_0/
  mkdir -p suite/broken/test_data_set_0
  printf 'garbage' >suite/broken/model.onnx
  run_onnxc test-suite suite -j 2 --tsv table.tsv
  expect_rc 1
  [[ $(tail -1 out) == "test-suite: 1 passed, 1 failed, 1 errored, 1 unsupported" ]] || fail "totals: '$(tail -1 out)'"
  expect_out 'passed +add_ok'
  expect_out "failed +add_bad .*output 'sum'"
  expect_out 'errored +broken .*import'
  expect_out 'unsupported +unsupported .*Frobnicate'
  [[ $(wc -l <table.tsv) -eq 5 ]] || fail "table.tsv should have a header and 4 rows"
  run_onnxc test-suite suite --filter '^add_ok$'
  expect_rc 0
  [[ $(tail -1 out) == "test-suite: 1 passed, 0 failed, 0 errored, 0 unsupported" ]] || fail "filter: '$(tail -1 out)'"
  printf 'add_ok\nunsupported_op_not_here # comment\n' >expect.txt
  run_onnxc test-suite suite --filter add_ok --expect-pass expect.txt
  expect_rc 0
}

# A crashing child is reported, not fatal: a model folder whose run segfaults is simulated with a
# timeout instead (a hang), which exercises the same kill-and-report path.
case_test_suite_timeout() {
  mkdir -p suite
  cp -r "$ADD" suite/slow
  # A model whose run sums 2^50 ones never ends in practice. (A FIFO as model.onnx used to serve
  # here; onnxc now refuses FIFOs without reading them.)
  cp "$DATA/endless.onnx" suite/slow/model.onnx
  run_onnxc test-suite suite --timeout 2
  expect_rc 1
  expect_out 'errored +slow .*timed out after 2 s'
}

declare -F "case_$CASE" >/dev/null || { echo "unknown case $CASE" >&2; exit 2; }
"case_$CASE"
echo "PASS [$CASE]"
