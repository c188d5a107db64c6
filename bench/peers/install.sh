#!/usr/bin/env bash
# Creates the peers' virtual environment (default build/peers-venv, or $ONNXC_PEERS_VENV) with the
# pinned ONNX Runtime, onnx and numpy from PyPI; --openvino adds OpenVINO. Prints the interpreter.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV=${ONNXC_PEERS_VENV:-$HERE/../../build/peers-venv}
reqs=(-r "$HERE/requirements.txt")
[[ ${1:-} == --openvino ]] && reqs+=(-r "$HERE/requirements-openvino.txt")
[[ -x $VENV/bin/python ]] || python3 -m venv "$VENV" >&2
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "${reqs[@]}" >&2
echo "$VENV/bin/python"
