#!/usr/bin/env bash
# Packs what bench/gpu/check.sh needs on a GPU machine that has no Debian packages of ours: the onnxc
# CLI and onnxc-device-io (stripped) with the shared libraries it loads (Halide, LLVM, protobuf, ONNX and theirs; not
# glibc or libstdc++, which the machine has), the runtime library, and the ONNX 1.12 backend test
# data. Writes .gpu/onnxc.tar.xz and .gpu/testdata.tar.xz at the repository root (ignored by git;
# the device tool carries .gpu). About 55 MiB in all.
#
#   bench/gpu/pack.sh [BUILD_DIR] [--base ONNXC]
# --base: a second onnxc binary (an earlier build) packed as bin/onnxc-base, which check.sh times
# beside the current one in the same run (before/after on the same GPU).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=build
BASE=
while [ $# -gt 0 ]; do
  case $1 in
    --base) BASE=$2; shift ;;
    *) BUILD=$1 ;;
  esac
  shift
done
OUT=.gpu
DEVICE_IO=$BUILD/tests/runtime/onnxc-device-io
for f in "$BUILD/tools/onnxc" "$BUILD/runtime/libonnxc_runtime.so" "$DEVICE_IO"; do
  [ -e "$f" ] || { echo "pack: $f is missing: build first (cmake --build $BUILD --target onnxc onnxc_runtime onnxc_device_io)" >&2; exit 1; }
done
command -v patchelf >/dev/null || { echo "pack: patchelf is needed (apt-get install patchelf)" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$OUT"
strip -o "$stage/bin/onnxc" "$BUILD/tools/onnxc"
# DT_RPATH (not RUNPATH) so that the libraries' own dependencies are found beside them too, without
# LD_LIBRARY_PATH leaking into the compilers onnxc starts.
patchelf --force-rpath --set-rpath '$ORIGIN/../lib' "$stage/bin/onnxc"
strip -o "$stage/bin/onnxc-device-io" "$DEVICE_IO"  # check.sh's device stage: the C API's device path
patchelf --force-rpath --set-rpath '$ORIGIN/../lib' "$stage/bin/onnxc-device-io"
if [ -n "$BASE" ]; then
  strip -o "$stage/bin/onnxc-base" "$BASE"
  patchelf --force-rpath --set-rpath '$ORIGIN/../lib' "$stage/bin/onnxc-base"
fi
ldd "$BUILD/tools/onnxc" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
    *) cp -L "$lib" "$stage/lib/" ;;
  esac
done
# Under its soname too: onnxc-device-io links it by that name.
cp -L "$BUILD/runtime/libonnxc_runtime.so" "$stage/lib/"
soname=$(readelf -d "$BUILD/runtime/libonnxc_runtime.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ -n "$soname" ] && [ "$soname" != libonnxc_runtime.so ] && ln -sf libonnxc_runtime.so "$stage/lib/$soname"
# The device tool carries at most 64 MiB (the tracked tree, ~23 MiB, included). Two libraries that
# Debian's LLVM loads but onnxc never calls are replaced by stubs that carry only their names: Z3
# (the static analyzer's solver; LLVM binds its 112 functions lazily, through the PLT, with no symbol
# versions) and ICU's data (libxml2 -> libicuuc needs the symbol icudt72_dat; nothing here converts
# text encodings). Together ~14 MiB compressed. `onnxc compile` is run from the stage below, so a
# stub that the loader refuses fails here, not on the GPU machine.
stub() {  # stub SONAME [C source]
  [ -e "$stage/lib/$1" ] || return 0
  printf '%s\n' "${2:-}" > "$stage/stub.c"
  gcc -shared -fPIC -nostdlib -Wl,-soname,"$1" -o "$stage/lib/$1" "$stage/stub.c"
  rm -f "$stage/stub.c"
}
stub libz3.so.4
for data in "$stage"/lib/libicudata.so.*; do
  [ -e "$data" ] || continue
  major=${data##*.so.}
  stub "libicudata.so.$major" "const unsigned char icudt${major}_dat[64] __attribute__((aligned(16))) = {0};"
done
model=$(mktemp -d)
if ! "$stage/bin/onnxc" compile tests/models/encoder_layer/model.onnx -o "$model" -q > "$model/log" 2>&1; then
  echo "pack: the packed onnxc does not run here:" >&2; cat "$model/log" >&2; rm -rf "$model"; exit 1
fi
rm -rf "$model"
# check.sh's bisect stage: models that differ on a GPU, with intermediate values as outputs too and
# references from this build on the CPU (bench/gpu/bisect_model.py; python with onnx: BISECT_PYTHON,
# default Debian's /usr/bin/python3). SAM's vision encoder differed on an H100 (session 14): `blocks`
# keeps its fusions (block outputs only), `all` has every float stage as an output (no attention fusion).
BISECT_PY=${BISECT_PYTHON:-/usr/bin/python3}
mkdir -p "$stage/bisect"
if "$BISECT_PY" -c 'import onnx' 2> /dev/null; then
  "$BISECT_PY" bench/gpu/bisect_model.py tests/models/fusion/hf_sam_vision_ts "$stage/bisect/sam_blocks" "$BUILD/tools/onnxc" \
    LayerNormalization_output_0 Conv_output_0 layers.0/Add_ layers.1/Add_ proj/Add_output_0
  "$BISECT_PY" bench/gpu/bisect_model.py tests/models/fusion/hf_sam_vision_ts "$stage/bisect/sam_all" "$BUILD/tools/onnxc"
else
  echo "pack: $BISECT_PY has no onnx module: check.sh's bisect stage will have no models" >&2
fi
tar -C "$stage" -cf - bin lib bisect | xz -T2 -6 > "$OUT/onnxc.tar.xz"
tar -C /usr/share/libonnx-testdata -cf - data/node data/pytorch-converted data/pytorch-operator data/simple |
  xz -T2 -6 > "$OUT/testdata.tar.xz"
du -b "$OUT"/*.tar.xz | awk '{s += $1; printf "%8.1f MiB  %s\n", $1 / 1048576, $2} END {printf "%8.1f MiB  in all\n", s / 1048576}'
