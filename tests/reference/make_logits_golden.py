#!/usr/bin/env python3
"""Golden logits and greedy continuations from an independent implementation.

llama.cpp, through the PyPI package llama-cpp-python, is the reference for GGUF semantics. For
each fixed prompt this records the prompt's token ids, the top-20 (id, logit) at every prompt
position, and the first 32 greedy tokens with the reference's top-1/top-2 margin at each step (so
the C++ test can tell a real divergence from a near-tie). Output: tests/data/oracle/<model>.json.

The prompt set follows the model: an instruction-tuned model with a chat template gets a turn in
its format (Gemma 3 270M is the base model: a French completion instead); a model with a trained sliding window (Gemma 3: 512 tokens on its local layers) also
gets a prompt longer than the window, so positions past it and the greedy tokens after it check
that local layers forget what lies outside their window.

Regenerate (needs `pip install llama-cpp-python numpy`; nothing of it is committed):
    python3 tests/reference/make_logits_golden.py models/SmolLM2-135M-Instruct.Q4_1.gguf
    python3 tests/reference/make_logits_golden.py models/gemma-3-270m-q4_k_m.gguf
"""
import hashlib
import json
import os
import sys

import numpy as np
from llama_cpp import Llama, __version__ as llama_cpp_version

TOP = 20
N_GREEDY = 32
COMMON_PROMPTS = [
    "The capital of France is",
    "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
    "Once upon a time, in a small village by the sea, there lived an old fisherman who",
    "Numbers: 3.14159, 2,718 and 1e-9; emoji 🙂 and accents: café, naïve, Zürich.",
]
TURN_PROMPTS = {
    "llama": "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
             "<|im_start|>user\nWhat is the capital of France? Answer in one word.<|im_end|>\n<|im_start|>assistant\n",
    "gemma3": "La tour Eiffel a été construite pour l'Exposition universelle de",
}
ALICE = os.path.join(os.path.dirname(__file__), "..", "..", "resources", "eval", "alice_wonderland.txt")


def prompts_for(llm):
    arch = llm.metadata.get("general.architecture", "llama")
    prompts = list(COMMON_PROMPTS)
    prompts.insert(2, TURN_PROMPTS[arch])
    window = int(llm.metadata.get(arch + ".attention.sliding_window", "0"))
    if window > 0:
        # The text's first tokens until the prompt runs 48 tokens past the window.
        words = open(ALICE, encoding="utf-8").read().split(" ")
        n = 1
        while len(llm.tokenize(" ".join(words[:n]).encode("utf-8"), add_bos=True)) < window + 48:
            n += 8
        prompts.append(" ".join(words[:n]))
    return prompts


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def top_k(row, k):
    ids = np.argsort(-row, kind="stable")[:k]
    return [[int(i), round(float(row[i]), 5)] for i in ids]


def main():
    model = sys.argv[1] if len(sys.argv) > 1 else "models/SmolLM2-135M-Instruct.Q4_1.gguf"
    # A context just long enough: llama.cpp's attention reduction order follows the KV cache's
    # size, so the same prompts at a larger context give (validly) different low bits.
    llm = Llama(model_path=model, n_ctx=512, n_batch=512, n_threads=2, logits_all=True, verbose=False)
    prompts = prompts_for(llm)
    n_ctx = 512
    if max(len(llm.tokenize(p.encode("utf-8"), add_bos=True, special=True)) for p in prompts) + N_GREEDY > n_ctx:
        n_ctx = 1024
        llm = Llama(model_path=model, n_ctx=n_ctx, n_batch=n_ctx, n_threads=2, logits_all=True, verbose=False)
    out = {
        "generator": f"llama-cpp-python {llama_cpp_version} (llama.cpp, CPU)",
        "model_file": os.path.basename(model),
        "model_sha256": sha256(model),
        "top": TOP,
        "n_ctx": n_ctx,
        "prompts": [],
    }
    for prompt in prompts:
        tokens = llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
        llm.reset()
        llm.eval(tokens)
        scores = np.array(llm.scores[: len(tokens)], dtype=np.float32)
        positions = [{"pos": i, "top": top_k(scores[i], TOP)} for i in range(len(tokens))]
        # Greedy continuation, one token at a time, as a chat would run.
        greedy, margins = [], []
        last = scores[-1]
        for _ in range(N_GREEDY):
            srt = np.sort(last)
            margins.append(float(srt[-1] - srt[-2]))
            tok = int(np.argmax(last))
            greedy.append(tok)
            llm.eval([tok])
            last = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
        out["prompts"].append({"prompt": prompt, "tokens": [int(t) for t in tokens], "positions": positions,
                               "greedy": greedy, "greedy_margins": margins})
        print(f"{len(tokens):3d} tokens, greedy: {llm.detokenize(greedy).decode('utf-8', 'replace')!r}")
    # The reference's own noise floor: the same prompts evaluated in other valid orders of the same
    # float arithmetic — one token at a time instead of in one batch, and through llama.cpp's
    # flash-attention kernel (f16 queries, online softmax) instead of its default one. The C++
    # test's max bound is justified against the largest of these figures, its mean bound against
    # the token-by-token order's (the two share llama.cpp's default kernels and rounding).
    spread, mean_position_max = 0.0, None
    for label, options in [("token-by-token", dict(n_batch=1, n_ubatch=1)), ("flash attention", dict(n_batch=n_ctx, flash_attn=True))]:
        other = Llama(model_path=model, n_ctx=n_ctx, n_threads=2, logits_all=True, verbose=False, **options)
        worst, position_maxima = 0.0, []
        for entry in out["prompts"]:
            other.reset()
            other.eval(entry["tokens"])
            scores = np.array(other.scores[: len(entry["tokens"])], dtype=np.float32)
            for pos in entry["positions"]:
                position_max = max(abs(float(scores[pos["pos"]][tok]) - logit) for tok, logit in pos["top"])
                position_maxima.append(position_max)
                worst = max(worst, position_max)
        print(f"reference noise floor (batch vs {label}): max |delta logit| = {worst:.3f}, "
              f"mean per-position max = {np.mean(position_maxima):.3f}")
        out[f"reference_vs_{label.replace(' ', '_').replace('-', '_')}"] = {"max_delta": worst, "mean_position_max": float(np.mean(position_maxima))}
        spread = max(spread, worst)
        if mean_position_max is None:
            mean_position_max = float(np.mean(position_maxima))
    out["reference_batch_vs_sequential_max_delta"] = spread
    # The same spread averaged over positions (each position's largest |delta| among its top
    # logits): the floor for the C++ test's mean bound.
    out["reference_batch_vs_sequential_mean_position_max"] = mean_position_max
    name = os.path.splitext(os.path.basename(model))[0]
    dest = os.path.join(os.path.dirname(__file__), "..", "data", "oracle", name + ".json")
    with open(dest, "w") as f:
        json.dump(out, f, separators=(",", ":"))
    print("wrote", os.path.normpath(dest))


if __name__ == "__main__":
    main()
