#!/usr/bin/env python3
"""A long greedy reply under each attention spec, beside full attention's: the KV bytes held at
the end and at the peak, the decode speed, and how far the reply follows full attention's (the
first token where it departs, and the share of the first N tokens equal). Shows what decode-time
eviction (tova/h2o decoding=evict) holds against decoding=grow as a reply runs on.

  bench/press_long_reply.py [--prompt-tokens 1024] [-n 512] [-t 2] SPEC...

The prompt is the start of resources/eval/alice_wonderland.txt, cut to about --prompt-tokens
tokens; the reply continues it (raw text, no chat template, end-of-text ignored).
"""
import argparse
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run(cli, model, prompt, spec, n, threads):
    cmd = [cli, "run", "--json", "-m", model, "-p", prompt, "-n", str(n), "--temp", "0", "--ignore-eos",
           "-t", str(threads), "-c", "4096", "--attention", spec]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"press_long_reply: {spec}: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else 'failed'}")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="+")
    ap.add_argument("--prompt-tokens", type=int, default=1024)
    ap.add_argument("-n", type=int, default=512)
    ap.add_argument("-t", type=int, default=2)
    ap.add_argument("-m", default=str(ROOT / "models/SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("--cli", default=str(ROOT / "build/bin/workbench-cli"))
    args = ap.parse_args()
    text = (ROOT / "resources/eval/alice_wonderland.txt").read_text()
    # About four characters a token for this text; the run reports the count it read.
    prompt = text[: args.prompt_tokens * 4]
    full = run(args.cli, args.m, prompt, "full", args.n, args.t)
    print(f"prompt {full['prompt_tokens']} tokens, reply {len(full['tokens'])} tokens, greedy")
    print("| attention | KV at the end (MiB) | KV peak (MiB) | ÷ full | follows full for | equal tokens % | decode tok/s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    mib = 1 << 20
    for spec in ["full"] + args.specs:
        r = full if spec == "full" else run(args.cli, args.m, prompt, spec, args.n, args.t)
        m = r["metrics"]
        a, b = r["tokens"], full["tokens"]
        first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        equal = 100.0 * sum(x == y for x, y in zip(a, b)) / max(1, len(b))
        print(f"| `{spec}` | {m['kv_bytes'] / mib:.1f} | {m['kv_bytes_peak'] / mib:.1f} | {m['kv_bytes'] / full['metrics']['kv_bytes']:.2f} "
              f"| {first} | {equal:.1f} | {m['decode_tok_s']:.1f} |")


if __name__ == "__main__":
    main()
