#!/usr/bin/env bash
# Installs what onnxc needs to build and test on Debian 12 (run as root, or with sudo available).
# Idempotent: skips apt-get when everything is already installed.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libhalide14-0-dev          # Halide 14 + LLVM 14 (codegen)
  libonnx-dev                # ONNX 1.12 protobuf classes, checker, shape inference (frontend)
  libprotobuf-dev protobuf-compiler
  libonnx-testdata           # ONNX backend conformance tests (/usr/share/libonnx-testdata/data)
  libgtest-dev googletest
  clang libclang-rt-14-dev   # the sanitizer build and libFuzzer targets (scripts/sanitize.sh)
  python3-numpy python3-pytest  # the Python package (python/onnxc) and its tests (tests/python)
  python3-venv               # bench/peers/install.sh: ONNX Runtime from PyPI in a venv of its own
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user  # ARM64 libraries, run under qemu (tests/cross)
)
# Optional extras: `--with-python` adds Debian's torch/onnx for tests/models/gen_models.py, the torch
# tests of the Python package and examples/python (reported skipped without them).
if [[ "${1:-}" == "--with-python" ]]; then
  PACKAGES+=(python3-onnx python3-torch)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all Debian packages present"
fi
