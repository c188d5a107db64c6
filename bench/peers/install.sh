#!/usr/bin/env bash
# Creates the peers' virtual environment (default build/peers-venv, or $ONNXC_PEERS_VENV) with the
# pinned ONNX Runtime, onnx and numpy from PyPI; --openvino adds OpenVINO, --llm what the
# language-model benchmark needs (torch, transformers, ONNX Runtime GenAI). Prints the interpreter.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV=${ONNXC_PEERS_VENV:-$HERE/../../build/peers-venv}
reqs=(-r "$HERE/requirements.txt")
for opt in "$@"; do
  case $opt in
    --openvino) reqs+=(-r "$HERE/requirements-openvino.txt") ;;
    --llm) reqs+=(-r "$HERE/requirements-llm.txt") ;;
    *) echo "install.sh: unknown option '$opt'" >&2; exit 2 ;;
  esac
done
[[ -x $VENV/bin/python ]] || python3 -m venv "$VENV" >&2
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "${reqs[@]}" >&2
echo "$VENV/bin/python"
