#!/usr/bin/env python3
"""Writes the golden files that test_quantize compares the C++ Q4_K / Q5_K / Q6_K reference
quantizers against: tests/data/kquant/q4_k.golden, q5_k.golden and q6_k.golden. The blocks come
from llama.cpp's own quantizer (ggml's quantize_row_q{4,5,6}_K_ref, reached through
ggml_quantize_chunk with no importance matrix) in the libggml-base shared library that the
llama-cpp-python package ships; the dequantized values from gguf-py. Fixed seed: reruns give
identical bytes. WB_LIBGGML_BASE=/path/to/libggml-base.so takes that library instead (a
llama.cpp build from the same sdist, e.g. the one bench/compare_llamacpp.sh uses).

Regenerate:  python3 tests/reference/make_kquant_golden.py   (needs numpy, gguf and
             llama-cpp-python; made with llama-cpp-python 0.3.36, gguf 0.17.1, numpy 2.4)

The files use the layout of tests/data/dequant/ (see make_dequant_golden.py), flag bit 0 set:
    char[4] "WBDQ", u32 version 1, u32 ggml type, u32 n_elements, u32 flags = 1,
    f32[n] input, u8[...] blocks (ggml's quantization of the input), f32[n] gguf's dequantization

The input is N_ROWS rows of N_PER_ROW floats (two 256-element super-blocks a row), each row a
shape that reaches a different branch of the quantizers: outliers, all-equal values, all
positive / negative sub-blocks (the Q4_K min clamps at 0), tiny values (fp16 super-block scales
that are subnormal or flush to 0, so the `d == 0` skip keeps the first-pass quants), values on
a grid (rounding ties), sub-blocks whose 6-bit scale rounds to 0, an all-zero row.
"""

import ctypes
import importlib.util
import os
import struct
import sys
from pathlib import Path

import numpy as np
from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType as T
from gguf.quants import dequantize

OUT_DIR = Path(__file__).resolve().parent.parent / "data" / "kquant"
SEED = 20250317
N_ROWS = 12
N_PER_ROW = 512
FLAG_HAS_INPUT = 1


def load_ggml() -> ctypes.CDLL:
    """libggml-base from WB_LIBGGML_BASE or the installed llama_cpp package (found without
    importing it)."""
    override = os.environ.get("WB_LIBGGML_BASE")
    if override:
        candidates = [Path(override)]
    else:
        spec = importlib.util.find_spec("llama_cpp")
        if spec is None or spec.origin is None:
            sys.exit("llama-cpp-python is not installed (pip install llama-cpp-python), and WB_LIBGGML_BASE is not set")
        lib_dir = Path(spec.origin).parent / "lib"
        candidates = sorted(lib_dir.glob("libggml-base.so*")) + sorted(lib_dir.glob("libggml-base.dylib"))
        if not candidates:
            sys.exit(f"no libggml-base shared library under {lib_dir}")
    lib = ctypes.CDLL(str(candidates[0]))
    lib.ggml_quantize_chunk.restype = ctypes.c_size_t
    lib.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                        ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
    return lib


def ggml_quantize(lib: ctypes.CDLL, qtype: T, x: np.ndarray) -> np.ndarray:
    """ggml_quantize_chunk(type, x, dst, 0, rows, n_per_row, imatrix = NULL): the _ref path."""
    x = np.ascontiguousarray(x, dtype=np.float32).reshape(-1, N_PER_ROW)
    block_elements, block_bytes = GGML_QUANT_SIZES[qtype]
    out = np.zeros(x.size // block_elements * block_bytes, dtype=np.uint8)
    written = lib.ggml_quantize_chunk(int(qtype), x.ctypes.data, out.ctypes.data, 0, x.shape[0],
                                      x.shape[1], None)
    assert written == out.size, (written, out.size)
    return out


def make_rows(rng: np.random.Generator) -> np.ndarray:
    n = N_PER_ROW
    rows = []
    rows.append(rng.normal(0.0, 1.0, n))                     # 0 plain gaussian
    rows.append(rng.normal(0.0, 0.02, n))                    # 1 weight-like magnitude
    rows.append(rng.laplace(0.0, 0.05, n))                   # 2 heavy tails
    r = rng.normal(0.0, 0.1, n)                              # 3 outliers dominate sub-blocks
    r[rng.choice(n, 12, replace=False)] *= rng.choice([-60.0, 40.0, 90.0], 12)
    rows.append(r)
    rows.append(np.concatenate([np.full(256, 0.7), np.full(256, -1.3)]))  # 4 all equal
    r = rng.normal(0.0, 1.0, n)                              # 5 tiny: fp16 d subnormal or 0
    r *= np.repeat(10.0 ** rng.uniform(-9.0, -4.0, n // 32), 32)
    r[:256] *= 1e-2
    rows.append(r)
    rows.append(rng.uniform(0.5, 2.0, n))                    # 6 all positive: min -> 0
    rows.append(-rng.uniform(0.01, 3.0, n))                  # 7 all negative
    r = rng.normal(0.0, 0.3, n)                              # 8 degenerate sub-blocks
    r[0:32] = 0.0
    r[32:64] = -0.25
    r[64:96] = 0.0
    r[70] = 1.5                                              # one non-zero value
    r[96:112] = 0.0                                          # a zero Q6_K sub-block
    r[256:288] = 3.0
    r[300:316] = 1e-30
    rows.append(r)
    rows.append(rng.integers(-8, 8, n) * 0.25)               # 9 grid: rounding ties
    r = rng.normal(0.0, 1.0, n)                              # 10 spread scales: some 6-bit
    r *= np.repeat(10.0 ** rng.uniform(-4.0, 1.0, n // 32), 32)  # scales round to 0
    rows.append(r)
    rows.append(np.zeros(n))                                 # 11 all zero
    assert len(rows) == N_ROWS
    return np.concatenate(rows).astype(np.float32)


def write(path: Path, qtype: T, x: np.ndarray, blocks: np.ndarray, deq: np.ndarray):
    with open(path, "wb") as f:
        f.write(b"WBDQ" + struct.pack("<4I", 1, int(qtype), x.size, FLAG_HAS_INPUT))
        f.write(np.ascontiguousarray(x, dtype="<f4").tobytes())
        f.write(blocks.tobytes())
        f.write(np.ascontiguousarray(deq, dtype="<f4").tobytes())


def main() -> int:
    lib = load_ggml()
    rng = np.random.default_rng(SEED)
    x = make_rows(rng)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    total = 0
    for qtype in (T.Q4_K, T.Q5_K, T.Q6_K):
        blocks = ggml_quantize(lib, qtype, x)
        deq = dequantize(blocks, qtype).reshape(-1).astype(np.float32)
        assert np.isfinite(deq).all()
        path = OUT_DIR / f"{qtype.name.lower()}.golden"
        write(path, qtype, x, blocks, deq)
        total += path.stat().st_size
        err = np.abs(deq - x).reshape(N_ROWS, -1).max(axis=1)
        print(f"{path.name}: max |error| per row {np.array2string(err, precision=3)}")
    print(f"wrote 3 files, {total} bytes, to {OUT_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
