"""Reading Baton's token store and writing the GPU machine's token files (stdlib only).

A token store piece (engine/src/core/training/token_store.h) holds int32 ids, the uint64
document offsets (count + 1), the documents' names ended by '\\n', then a 64-byte
trailer: magic, version, documents, tokens, name bytes, checksum, identity.

The GPU machine reads uint16 little-endian ids, documents concatenated, compressed with
lzma (xz), each array described by its sha256 before and after compression
(tools/gpu/pretrain.py checks both).
"""
import glob
import hashlib
from array import array
import lzma
import os
import struct
import sys


def read_piece(path):
    """[(name, ids)] of one piece (ids: array of int32), checked for size and magic."""
    b = open(path, "rb").read()
    if len(b) < 64:
        sys.exit(f"error: {path}: too short for a token store piece")
    magic = b[-64:-56]
    version, count, tokens, name_bytes = struct.unpack_from("<4Q", b, len(b) - 56)
    if magic != b"BATONTOK" or version != 1:
        sys.exit(f"error: {path}: not a version 1 token store piece")
    if tokens * 4 + (count + 1) * 8 + name_bytes + 64 != len(b):
        sys.exit(f"error: {path}: its sizes do not add up")
    offsets = struct.unpack_from(f"<{count + 1}Q", b, tokens * 4)
    names = b[tokens * 4 + (count + 1) * 8:len(b) - 64].decode("utf-8").split("\n")[:count]
    if sys.byteorder != "little":
        sys.exit("error: this script assumes a little-endian machine")
    docs = []
    for d in range(count):
        ids = array("i")
        ids.frombytes(b[4 * offsets[d]:4 * offsets[d + 1]])
        docs.append((names[d], ids))
    return docs


def read_store(folder):
    """Every piece of a token store folder, each a list of (name, ids), in name order."""
    pieces = sorted((read_piece(p) for p in glob.glob(os.path.join(folder, "piece-*.tok"))),
                    key=lambda docs: docs[0][0] if docs else "")
    if not pieces:
        sys.exit(f"error: no token store pieces in {folder}")
    return pieces


def pack(docs, vocab, name_of=lambda n: n):
    """uint16 bytes of [(name, ids)] concatenated, and their index [{name, offset, length}]."""
    if sys.byteorder != "little":
        sys.exit("error: this script assumes a little-endian machine")
    if vocab > 65536:
        sys.exit(f"error: {vocab} tokens do not fit uint16")
    arr, index, offset = bytearray(), [], 0
    for name, ids in docs:
        if len(ids) and (min(ids) < 0 or max(ids) >= vocab):
            sys.exit(f"error: {name}: token id out of range")
        arr += array("H", ids).tobytes()
        index.append({"name": name_of(name), "offset": offset, "length": len(ids)})
        offset += len(ids)
    return bytes(arr), index


def write_xz(raw, path, preset=9):
    """Writes raw compressed to path; returns the entry meta.json keeps of it."""
    xz = lzma.compress(raw, preset=preset)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(xz)
    os.replace(tmp, path)
    return {"file": os.path.basename(path), "tokens": len(raw) // 2,
            "sha256": hashlib.sha256(raw).hexdigest(),
            "xz_sha256": hashlib.sha256(xz).hexdigest(), "xz_bytes": len(xz)}
