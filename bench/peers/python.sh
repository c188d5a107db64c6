#!/usr/bin/env bash
# Prints an interpreter that can import onnxruntime: $ONNXC_PEERS_PYTHON, else the venv that
# install.sh made, else none (exit 1, with the reason on stderr). Callers skip their peer checks then.
HERE="$(cd "$(dirname "$0")" && pwd)"
for py in "${ONNXC_PEERS_PYTHON:-}" "${ONNXC_PEERS_VENV:-$HERE/../../build/peers-venv}/bin/python"; do
  [[ -n $py && -x $py ]] && "$py" -c 'import onnxruntime, numpy, onnx' 2>/dev/null && { echo "$py"; exit 0; }
done
echo "no Python with onnxruntime, onnx and numpy (run bench/peers/install.sh, or set ONNXC_PEERS_PYTHON)" >&2
exit 1
