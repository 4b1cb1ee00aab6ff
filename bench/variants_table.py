#!/usr/bin/env python3
"""Renders bench/variants_table.sh's JSON lines as the markdown table of docs/VARIANTS_EVAL.md.
Usage: bench/variants_table.py docs/variants.jsonl"""
import json
import sys


def mib(b):
    return f"{b / 2**20:.1f}"


# Bytes per value of each KV type relative to f16, scales included.
FACTOR = {"f32": 2.0, "f16": 1.0, "bf16": 1.0, "q8_0": 34 / 64, "fp8": 34 / 64, "q4_0": 18 / 64}


def f16_factor(kv_type):
    if kv_type.startswith("k="):
        k, v = (part.split("=")[1] for part in kv_type.split(","))
        return (FACTOR[k] + FACTOR[v]) / 2
    return FACTOR[kv_type]


def main(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    print("| ctx | attention | KV type | KV MiB (full f16) | KV ÷ full | read/token MiB (full f16) | read ÷ full "
          "| PPL | ΔPPL % | KL | top-1 % | decode tok/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        # Ratios against full attention with f16 KV at the same context.
        f = f16_factor(r["kv_type"])
        kv, full = r["kv_bytes_peak"], r["kv_bytes_full"] / f
        rd, rfull = r["kv_bytes_read_per_token"], r["kv_bytes_read_full"] / f
        dec = r.get("decode_tok_s")
        print(f"| {r['ctx']} | `{r['attention']}` | {r['kv_type']} | {mib(kv)} ({mib(full)}) | "
              f"{kv / full:.2f} | {mib(rd)} ({mib(rfull)}) | {rd / rfull if rfull else 0:.2f} | "
              f"{r['ppl']:.3f} | {r['delta_ppl_pct']:+.2f} | {r['kl_mean']:.4f} | "
              f"{100 * r['top1_agreement']:.1f} | {dec:.1f} |" if dec else "| n/a |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs/variants.jsonl")
