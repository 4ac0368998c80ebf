"""The files of a Hugging Face model folder written without `safetensors` or `transformers`:
safetensors (F16/F32) and sha256 sums, for tools/gpu/pretrain.py."""
import ctypes
import hashlib
import json
import os
import struct

import torch


# ---------------------------------------------------------------- safetensors

def write_safetensors(path, tensors, dtype):
    """tensors: list of (name, tensor). Little-endian, header padded to 8 bytes."""
    st = {torch.float16: "F16", torch.float32: "F32"}[dtype]
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors:
        t = t.detach().to("cpu", dtype).contiguous()
        n = t.numel() * t.element_size()
        header[name] = {"dtype": st, "shape": list(t.shape), "data_offsets": [off, off + n]}
        blobs.append((t, n))
        off += n
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for t, n in blobs:
            f.write(ctypes.string_at(t.data_ptr(), n))
    os.replace(tmp, path)


def read_safetensors(path):
    with open(path, "rb") as f:
        n, = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    dt = {"F16": torch.float16, "F32": torch.float32}
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        a, b = e["data_offsets"]
        out[name] = torch.frombuffer(bytearray(data[a:b]), dtype=dt[e["dtype"]]).view(e["shape"])
    return out


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
