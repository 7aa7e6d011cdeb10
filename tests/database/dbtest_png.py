"""A tiny PNG decoder (zlib + numpy) so the browser test can look at pixels without PIL.

Handles what Chromium writes: 8-bit RGB/RGBA, non-interlaced. The scanline filters (Sub, Up, Average,
Paeth) are undone along anti-diagonals: pixel (r, x) needs only (r, x-1), (r-1, x) and (r-1, x-1), which
all lie on the two previous diagonals, so each diagonal is one vectorized numpy step.
"""
from __future__ import annotations

import struct
import zlib

import numpy as np


def decode_png(data: bytes) -> np.ndarray:
    """Pixels as a (height, width, channels) uint8 array."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, header = 8, [], None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    if header is None:
        raise ValueError("PNG without IHDR")
    width, height, depth, color, _, _, interlace = header
    channels = {2: 3, 6: 4, 0: 1, 4: 2}.get(color)
    if depth != 8 or channels is None or interlace:
        raise ValueError(f"unsupported PNG (bit depth {depth}, color type {color}, interlace {interlace})")
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), dtype=np.uint8)
    rows = raw.reshape(height, 1 + width * channels)
    ftype = rows[:, 0].astype(np.int32)
    filt = rows[:, 1:].reshape(height, width, channels).astype(np.int32)
    if ftype.max() > 4:
        raise ValueError("bad PNG filter type")
    w1 = width + 1
    out = np.zeros(((height + 1) * w1, channels), dtype=np.int32)  # row 0 / col 0 are the zero border
    filt = filt.reshape(height * width, channels)
    for d in range(height + width - 1):
        r = np.arange(max(0, d - width + 1), min(height - 1, d) + 1)
        x = d - r
        here = (r + 1) * w1 + x + 1
        a, b, c = out[here - 1], out[here - w1], out[here - w1 - 1]
        p = a + b - c
        pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
        paeth = np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))
        f = ftype[r][:, None]
        pred = np.select([f == 1, f == 2, f == 3, f == 4], [a, b, (a + b) >> 1, paeth], 0)
        out[here] = (filt[r * width + x] + pred) & 0xFF
    return out.reshape(height + 1, w1, channels)[1:, 1:].astype(np.uint8)
