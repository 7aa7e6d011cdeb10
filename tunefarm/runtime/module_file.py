"""The saved-module file format: one file holding JSON metadata, object code and optimized LLVM IR.

Layout: ``MAGIC`` (8 bytes), header length (8 bytes little-endian), header JSON (utf-8), object bytes,
LLVM IR text (utf-8). The header records the section sizes, the metadata (target, functions, libgomp use)
and a format version. Plain data only: loading never executes Python.
"""
from __future__ import annotations

import json
import os
import struct

MAGIC = b"TFMOD\x00\x01\n"
VERSION = 1


class ModuleFileError(ValueError):
    """The file is not a tunefarm module, or is truncated/corrupt."""


def write_module_file(path, object_code: bytes, metadata: dict, ll: str) -> None:
    ll_bytes = ll.encode("utf-8")
    header = json.dumps({"version": VERSION, "object_size": len(object_code), "ll_size": len(ll_bytes),
                         "metadata": metadata}, sort_keys=True).encode("utf-8")
    tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
    with open(tmp, "wb") as fh:
        fh.write(MAGIC)
        fh.write(struct.pack("<Q", len(header)))
        fh.write(header)
        fh.write(object_code)
        fh.write(ll_bytes)
    os.replace(tmp, path)  # never leave a half-written module behind


def read_module_file(path) -> tuple[bytes, dict, str]:
    """``(object_code, metadata, ll)`` from a file written by ``write_module_file``."""
    with open(path, "rb") as fh:
        data = fh.read()
    if not data.startswith(MAGIC):
        raise ModuleFileError(f"{os.fspath(path)!r} is not a tunefarm module file (bad magic)")
    try:
        (hlen,) = struct.unpack_from("<Q", data, len(MAGIC))
        start = len(MAGIC) + 8
        header = json.loads(data[start:start + hlen].decode("utf-8"))
        pos = start + hlen
        osz, lsz = int(header["object_size"]), int(header["ll_size"])
        if header.get("version") != VERSION:
            raise ModuleFileError(f"{os.fspath(path)!r}: unsupported module format version {header.get('version')}")
        if len(data) != pos + osz + lsz:
            raise ModuleFileError(f"{os.fspath(path)!r} is truncated or has trailing data")
        return data[pos:pos + osz], header["metadata"], data[pos + osz:].decode("utf-8")
    except (struct.error, KeyError, TypeError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModuleFileError(f"{os.fspath(path)!r} is a corrupt tunefarm module file: {exc}") from None
