"""Reads an ONNX TensorProto file (the input_K.pb / output_K.pb of ONNX test-data folders) into a numpy
array without the onnx package: the protobuf wire format of the few fields a tensor uses."""
import numpy as np

from . import errors

# TensorProto.DataType -> numpy dtype (bfloat16 has none).
_NP = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
       9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}


def _varint(buf, pos):
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def _fields(buf):
    """Yields (field number, wire type, value): an int for varints, bytes for the other kinds."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        num, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 2:
            n, pos = _varint(buf, pos)
            value, pos = buf[pos:pos + n], pos + n
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        if pos > len(buf):
            raise ValueError("truncated field")
        yield num, wire, value


def _varints(wire, value):
    if wire == 0:
        return [value]
    out, pos = [], 0
    while pos < len(value):
        v, pos = _varint(value, pos)
        out.append(v)
    return out


def _signed(v, bits=64):
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def load_tensor(path):
    """Returns (name, array) for a TensorProto file. String tensors give an object array of str."""
    with open(path, "rb") as f:
        buf = f.read()
    dims, dtype, name, raw = [], 1, "", None
    typed = {4: [], 5: [], 6: [], 7: [], 10: [], 11: []}
    try:
        for num, wire, value in _fields(buf):
            if num == 1:
                dims += [_signed(v) for v in _varints(wire, value)]
            elif num == 2:
                dtype = value
            elif num == 8:
                name = value.decode()
            elif num == 9:
                raw = value
            elif num == 4:
                typed[4].append(np.frombuffer(value, "<f4"))
            elif num == 10:
                typed[10].append(np.frombuffer(value, "<f8"))
            elif num in (5, 7, 11):
                typed[num] += _varints(wire, value)
            elif num == 6:
                typed[6].append(value)
            elif num == 14 and value == 1:
                raise errors.Unsupported(f"{path}: tensor data in external files is not read here")
    except ValueError as e:
        raise errors.InvalidArgument(f"{path}: not a TensorProto file ({e})") from None
    if dtype == 8:
        arr = np.array([s.decode(errors="surrogateescape") for s in typed[6]], dtype=object)
        return name, arr.reshape(dims)
    if dtype not in _NP:
        raise errors.Unsupported(f"{path}: tensor data type {dtype} has no numpy dtype")
    np_type = np.dtype(_NP[dtype])
    if raw is not None:
        arr = np.frombuffer(raw, dtype=np_type.newbyteorder("<")).astype(np_type)
    elif dtype == 1:
        arr = np.concatenate(typed[4]) if typed[4] else np.zeros(0, np.float32)
    elif dtype == 11:
        arr = np.concatenate(typed[10]) if typed[10] else np.zeros(0, np.float64)
    elif dtype == 10:  # float16 bits stored in int32_data
        arr = np.array(typed[5], dtype=np.uint16).view(np.float16)
    elif dtype == 7:
        arr = np.array([_signed(v) for v in typed[7]], dtype=np.int64)
    elif dtype in (12, 13):
        arr = np.array(typed[11], dtype=np_type)
    else:  # int32, and the narrower ints and bool, all stored in int32_data
        arr = np.array([_signed(v) for v in typed[5]], dtype=np.int64).astype(np_type)
    expected = int(np.prod(dims, dtype=np.int64))
    if arr.size != expected:
        raise errors.InvalidArgument(f"{path}: {arr.size} elements for dims {dims}")
    return name, arr.reshape(dims)
