#!/usr/bin/env bash
# From a fresh Debian 12 clone: install the packages, build only what the quick start runs (the onnxc
# compiler, the runtime library, the Python package; the tests build in scripts/test.sh), then inspect,
# compile, run and compare the bundled encoder layer with PyTorch's outputs, from the CLI and Python.
# Extra arguments go to cmake's configure step. JOBS=N limits build parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${ONNXC_BUILD_DIR:-build}"
MODEL=tests/models/encoder_layer
START=$SECONDS
stage() { printf '\n== quickstart [%dm%02ds] %s\n' $(((SECONDS - START) / 60)) $(((SECONDS - START) % 60)) "$*"; }

stage "1/6 Debian packages (scripts/setup.sh)"
bash scripts/setup.sh

# A new build folder is configured without debug info (RelWithDebInfo's -O2, no -g): a fifth less
# compile time, and the quick start needs no debugger. It keeps these flags afterwards (scripts/test.sh
# builds in it as it is); pass -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g -DNDEBUG" or use a new folder
# with scripts/build.sh for debug info. A folder configured before keeps its own flags.
NO_DEBUG_INFO=()
if [[ ! -f "$BUILD/CMakeCache.txt" ]]; then
  NO_DEBUG_INFO=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG")
fi
stage "2/6 configure $BUILD/ (cmake, Ninja, RelWithDebInfo${NO_DEBUG_INFO[*]:+ without debug info})"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${NO_DEBUG_INFO[@]}" "$@" >/dev/null

stage "3/6 build onnxc, libonnxc_runtime and the Python package (not the tests)"
cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" --target onnxc onnxc_runtime onnxc_python

ONNXC="$BUILD/tools/onnxc"
stage "4/6 inspect $MODEL/model.onnx"
"$ONNXC" inspect "$MODEL/model.onnx"

stage "5/6 compile it into $BUILD/quickstart (libencoder.so, libencoder.a, encoder.h)"
"$ONNXC" compile "$MODEL/model.onnx" -o "$BUILD/quickstart" --name encoder

stage "6/6 run it on the 6 reference data sets and compare with PyTorch's outputs"
"$ONNXC" compare "$BUILD/quickstart/libencoder.so" "$MODEL" --rtol 1e-4 --atol 1e-5
echo "-- the same from Python (onnxc.InferenceSession, as onnxruntime's):"
PYTHONPATH="$BUILD/python" /usr/bin/python3 - "$BUILD/quickstart/libencoder.so" "$MODEL" <<'PY'
import glob, sys
import numpy as np
import onnxc
lib, model = sys.argv[1:]
sess = onnxc.InferenceSession(lib)
print("inputs:", [(i.name, i.shape, i.type) for i in sess.get_inputs()])
sets = sorted(glob.glob(model + "/test_data_set_*"))
for d in sets:
    feed = dict(onnxc.load_tensor(f) for f in sorted(glob.glob(d + "/input_*.pb")))
    (want,) = [onnxc.load_tensor(f)[1] for f in sorted(glob.glob(d + "/output_*.pb"))]
    (got,) = sess.run(None, feed)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
print(f"python: {len(sets)} of {len(sets)} data sets match")
PY

stage "done. Next: scripts/test.sh (the whole test suite), README.md (CLI, C and Python APIs)"
