#!/usr/bin/env python3
"""Golden logits of the tiny architecture models from llama.cpp (llama-cpp-python).

For each architecture the C++ tests check against llama.cpp, the tiny model written by
`wb-write-tiny-model ARCH` (tests/core_engine/model/tiny_arch_specs.h: a few layers, GQA, the
architecture's own tensors, F32 weights) runs, with an F32 KV cache, a fixed token list in llama.cpp; this records the
file's sha256, the logits at every position, and 16 greedy tokens with the top-1/top-2 margin at
each step. Output: tests/data/arch/tiny_<arch>.txt.

Regenerate (needs llama-cpp-python and numpy; nothing of it is committed):
    python3 tests/reference/make_arch_goldens.py build/bin/wb-write-tiny-model llama llama3 qwen2 qwen3 phi3
"""
import hashlib
import os
import subprocess
import sys
import tempfile

import numpy as np
from llama_cpp import Llama, __version__ as llama_cpp_version

N_VOCAB = 97
TOKENS = [int(t) for t in np.random.default_rng(20261202).integers(3, N_VOCAB, size=24)]
N_GREEDY = 16


def golden(writer, arch, out_dir):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"tiny_{arch}.gguf")
        subprocess.run([writer, arch, path], check=True)
        sha256 = hashlib.sha256(open(path, "rb").read()).hexdigest()
        # F32 K and V on both sides, so the comparison sees the forward pass, not KV rounding.
        model = Llama(path, logits_all=True, n_ctx=128, n_batch=128, type_k=0, type_v=0, flash_attn=False, verbose=False)
        model.eval(TOKENS)
        logits = np.array(model.scores[: len(TOKENS)], dtype=np.float32)
        greedy = []
        last = logits[-1]
        for _ in range(N_GREEDY):
            order = np.argsort(-last)
            token = int(order[0])
            greedy.append((token, float(last[order[0]] - last[order[1]])))
            model.eval([token])
            last = np.array(model.scores[model.n_tokens - 1], dtype=np.float32)
    lines = [
        f"# tiny {arch} model (wb-write-tiny-model {arch}) under llama-cpp-python {llama_cpp_version}",
        f"sha256 {sha256}",
        "tokens " + " ".join(map(str, TOKENS)),
    ]
    lines += ["logits " + " ".join(f"{v:.7g}" for v in row) for row in logits]
    lines.append("greedy " + " ".join(f"{t}:{m:.6g}" for t, m in greedy))
    out = os.path.join(out_dir, f"tiny_{arch}.txt")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{out}: {len(TOKENS)} positions, greedy {[t for t, _ in greedy]}")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "arch")
    os.makedirs(out_dir, exist_ok=True)
    for arch in sys.argv[2:]:
        golden(sys.argv[1], arch, out_dir)


if __name__ == "__main__":
    main()
