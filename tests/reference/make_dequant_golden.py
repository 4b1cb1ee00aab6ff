#!/usr/bin/env python3
"""Writes the golden files that test_dequantize / test_quantize compare the C++ reference
(de)quantizers against, one tests/data/dequant/<type>.golden per GGUF type, using the PyPI `gguf`
package (gguf.quants) as the ground truth and a fixed seed, so reruns give identical bytes.

Regenerate:  python3 tests/reference/make_dequant_golden.py   (needs numpy and gguf; made with
             gguf 0.19.0, the first with MXFP4, numpy 2.4; the other types' files are as 0.17.1 made them)

File layout (all little-endian):
    char[4]  magic "WBDQ"
    u32      version (1)
    u32      ggml type number
    u32      n_elements
    u32      flags: bit 0 = a float32 input precedes the blocks and the blocks are its
                    quantization; bit 1 = the blocks come from the reference written in this
                    script (gguf has no quantizer for the type), not from gguf itself
    f32[n]   input                         (only with flag bit 0)
    u8[...]  blocks                        (n / block_elements * block_bytes)
    f32[n]   dequantized blocks            (gguf's dequantizer; for Q8_1/Q8_K d*q)
"""

import struct
import sys
from pathlib import Path

import numpy as np
from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType as T
from gguf.quants import dequantize, np_roundf, quantize

OUT_DIR = Path(__file__).resolve().parent.parent / "data" / "dequant"
SEED = 20240611
FLAG_HAS_INPUT = 1
FLAG_SCRIPT_REFERENCE = 2


def block_layout(qtype: T) -> tuple[int, int]:
    """(elements, bytes) per block. gguf-py still lists Q8_1 with the old float d/s (40 bytes);
    ggml's block_q8_1 has fp16 d and s, 36 bytes."""
    return (32, 36) if qtype == T.Q8_1 else GGML_QUANT_SIZES[qtype]


def make_floats(rng: np.random.Generator, n_blocks: int, block: int) -> np.ndarray:
    """Block-wise random data: each block its own magnitude and a shape that exercises a
    different branch of the quantizers (all positive, outliers, ties on |max|, constants)."""
    out = []
    for b in range(n_blocks):
        scale = 10.0 ** rng.uniform(-3, 2)
        x = rng.normal(0.0, scale, block)
        kind = b % 8
        if kind == 1:  # all positive: the min of Q4_1/Q5_1 is > 0
            x = np.abs(x) + scale
        elif kind == 2:  # one outlier dominates the scale
            x[rng.integers(block)] *= 25.0
        elif kind == 3:  # |max| reached by both signs: the first one must win
            a = np.abs(x).max() * 1.5
            x[3], x[block // 2 + 1] = -a, a
        elif kind == 4:  # all negative
            x = -np.abs(x) - 0.1 * scale
        elif kind == 5:  # constant block: d == 0 for the min/max types
            x[:] = scale
        elif kind == 6:  # tiny values: fp16 scales become subnormal
            x = rng.normal(0.0, 1e-6, block)
        elif kind == 7:  # wide range inside one block
            x *= 10.0 ** rng.uniform(-3, 0, block)
            x[rng.integers(block)] = 1e4 * np.sign(rng.normal())
        out.append(x)
    return np.concatenate(out).astype(np.float32)


def plain_floats(rng: np.random.Generator) -> np.ndarray:
    """Data for F32/F16/BF16: random values plus the edge cases of the half conversions."""
    specials = np.array([
        0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -2.5,
        65504.0, 65519.99, 65520.0, 1e6, 3.0e38, -3.4e38,  # fp16 max, overflow to inf, bf16 top
        2.0 ** -14, 2.0 ** -24, 2.0 ** -25, 1.5 * 2.0 ** -25, 3e-5, 1e-8, 1e-40, -1e-42,
        1.0 + 2.0 ** -11, 1.0 + 3.0 * 2.0 ** -11,  # fp16 ties: to even, both directions
        np.frombuffer(struct.pack("<2I", 0x3F808000, 0x3F818000), np.float32)[0],  # bf16 ties
        np.frombuffer(struct.pack("<2I", 0x3F808000, 0x3F818000), np.float32)[1],
        np.frombuffer(struct.pack("<I", 0x3F808001), np.float32)[0],
        np.frombuffer(struct.pack("<I", 0x7F7FFFFF), np.float32)[0],  # FLT_MAX: bf16 -> inf
    ], dtype=np.float32)
    rest = make_floats(rng, 7, 32)
    return np.concatenate([specials, rest[: 256 - specials.size]]).astype(np.float32)


def q8_1_reference(x: np.ndarray) -> np.ndarray:
    """ggml's quantize_row_q8_1_ref: like Q8_0 plus s = fp16(d * sum(q)) for the dot products."""
    blocks = x.reshape(-1, 32)
    amax = np.abs(blocks).max(axis=1, keepdims=True)
    d = amax / np.float32(127)
    with np.errstate(divide="ignore"):
        inv = np.where(d == 0, np.float32(0), np.float32(1) / d).astype(np.float32)
    q = np_roundf(blocks * inv).astype(np.int8)
    s = q.astype(np.int32).sum(axis=1, keepdims=True).astype(np.float32) * d
    return np.concatenate([d.astype(np.float16).view(np.uint8), s.astype(np.float16).view(np.uint8),
                           q.view(np.uint8)], axis=1).reshape(-1)


def q8_k_reference(x: np.ndarray) -> np.ndarray:
    """ggml's quantize_row_q8_K_ref: float d, round-half-even quants, int16 sums of 16."""
    out = bytearray()
    for blk in x.reshape(-1, 256):
        i = int(np.abs(blk).argmax())  # first index with the largest |x|, as ggml's strict '>'
        if blk[i] == 0:
            out += struct.pack("<f", 0.0) + bytes(256) + bytes(32)
            continue
        iscale = np.float32(-127.0) / blk[i]
        q = np.minimum(np.rint(iscale * blk), 127).astype(np.int8)
        bsums = q.astype(np.int16).reshape(16, 16).sum(axis=1).astype("<i2")
        out += np.float32(np.float32(1.0) / iscale).tobytes() + q.tobytes() + bsums.tobytes()
    return np.frombuffer(bytes(out), np.uint8)


def q8_dequant(blocks: np.ndarray, qtype: T) -> np.ndarray:
    """d * q for the two activation types that gguf cannot dequantize."""
    block_elements, block_bytes = block_layout(qtype)
    raw = blocks.reshape(-1, block_bytes)
    if qtype == T.Q8_1:
        d = raw[:, 0:2].copy().view(np.float16).astype(np.float32)
        q = raw[:, 4:].copy().view(np.int8).astype(np.float32)
    else:
        d = raw[:, 0:4].copy().view(np.float32)
        q = raw[:, 4:4 + block_elements].copy().view(np.int8).astype(np.float32)
    return (d * q).reshape(-1).astype(np.float32)


def random_k_blocks(rng: np.random.Generator, qtype: T, n_blocks: int) -> np.ndarray:
    """Random but valid K-quant blocks: random quant/scale bytes, finite moderate fp16 scales."""
    _, block_bytes = block_layout(qtype)
    raw = rng.integers(0, 256, (n_blocks, block_bytes), dtype=np.uint8)
    # byte offsets of the fp16 super-block scales (d, and dmin where the type has one)
    half_offsets = {T.Q2_K: [80, 82], T.Q3_K: [108], T.Q4_K: [0, 2], T.Q5_K: [0, 2], T.Q6_K: [208]}
    for off in half_offsets[qtype]:
        mags = (10.0 ** rng.uniform(-5, 0, n_blocks)) * rng.choice([-1.0, 1.0], n_blocks)
        mags[0] = abs(mags[0])
        raw[:, off:off + 2] = mags.astype(np.float16).view(np.uint8).reshape(n_blocks, 2)
    return raw.reshape(-1)


def write(path: Path, qtype: T, n: int, flags: int, inp, blocks: np.ndarray, deq: np.ndarray):
    block_elements, block_bytes = block_layout(qtype)
    assert blocks.dtype == np.uint8 and blocks.size == n // block_elements * block_bytes
    assert deq.dtype == np.float32 and deq.size == n
    with open(path, "wb") as f:
        f.write(b"WBDQ" + struct.pack("<4I", 1, int(qtype), n, flags))
        if inp is not None:
            f.write(np.ascontiguousarray(inp, dtype="<f4").tobytes())
        f.write(blocks.tobytes())
        f.write(np.ascontiguousarray(deq, dtype="<f4").tobytes())


def main() -> int:
    rng = np.random.default_rng(SEED)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    written = []

    def emit(qtype, n, flags, inp, blocks, deq):
        path = OUT_DIR / f"{qtype.name.lower()}.golden"
        write(path, qtype, n, flags, inp, blocks, deq)
        written.append(path)

    plain = plain_floats(rng)
    for qtype in (T.F32, T.F16, T.BF16):
        with np.errstate(over="ignore"):  # values past 65504 become inf in fp16, on purpose
            blocks = quantize(plain, qtype).view(np.uint8).reshape(-1)
        emit(qtype, plain.size, FLAG_HAS_INPUT, plain, blocks, dequantize(blocks, qtype).reshape(-1))

    for qtype in (T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0):
        x = make_floats(rng, 16, 32)
        blocks = quantize(x, qtype).reshape(-1)
        emit(qtype, x.size, FLAG_HAS_INPUT, x, blocks, dequantize(blocks, qtype).reshape(-1))

    x = make_floats(rng, 16, 32)
    blocks = q8_1_reference(x)
    emit(T.Q8_1, x.size, FLAG_HAS_INPUT | FLAG_SCRIPT_REFERENCE, x, blocks, q8_dequant(blocks, T.Q8_1))

    x = make_floats(rng, 8, 256)
    blocks = q8_k_reference(x)
    emit(T.Q8_K, x.size, FLAG_HAS_INPUT | FLAG_SCRIPT_REFERENCE, x, blocks, q8_dequant(blocks, T.Q8_K))

    for qtype in (T.Q2_K, T.Q3_K, T.Q4_K, T.Q5_K, T.Q6_K):
        blocks = random_k_blocks(rng, qtype, 8)
        deq = dequantize(blocks, qtype).reshape(-1)
        assert np.isfinite(deq).all()
        emit(qtype, deq.size, 0, None, blocks, deq)

    # MXFP4 (gpt-oss's experts): blocks over many exponents, one all zero (e = 0) and one so
    # small its exponent is subnormal in E8M0 (e < 2).
    x = make_floats(rng, 16, 32)
    x[5 * 32:6 * 32] = 0.0
    x[7 * 32:8 * 32] = rng.normal(0.0, 1.0, 32) * np.float32(2.0 ** -125)
    blocks = quantize(x, T.MXFP4).view(np.uint8).reshape(-1)
    emit(T.MXFP4, x.size, FLAG_HAS_INPUT, x, blocks, dequantize(blocks, T.MXFP4).reshape(-1))

    total = sum(p.stat().st_size for p in written)
    print(f"wrote {len(written)} files, {total} bytes, to {OUT_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
