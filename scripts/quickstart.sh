#!/usr/bin/env bash
# One command from a fresh Debian 12 machine: install, build, then compile the bundled encoder
# layer, run it and compare it with PyTorch's own outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
scripts/build.sh
MODEL=tests/models/encoder_layer
./build/tools/onnxc inspect "$MODEL/model.onnx"
./build/tools/onnxc compile "$MODEL/model.onnx" -o build/quickstart --name encoder
./build/tools/onnxc compare build/quickstart/libencoder.so "$MODEL" --rtol 1e-4 --atol 1e-5
