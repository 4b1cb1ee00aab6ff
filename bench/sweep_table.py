#!/usr/bin/env python3
"""Renders `workbench-cli sweep -o` rows as the markdown tables of docs/VARIANTS.md: one row a
configuration (memory, speed, perplexity figures, retrieval), then decode time measured against
the time the row's bytes predict (rows that carry a prediction), then retrieval accuracy by
prompt length and by the depth of the fact for every row that measured it.
Usage: bench/sweep_table.py [--no-prefill] [--model FILE.gguf] docs/variants_sweep.jsonl
--no-prefill leaves out the prefill column (rows measured before commit db985ca timed a
one-token step instead of the window for variants that share a cached prefix).
--model keeps one model's rows where a file holds several (rows written before rows named their
model are kept for any)."""
import json
import sys


def mib(b):
    return f"{b / 2**20:.1f}"


def kind_accuracy(cells, kind):
    n = sum(c["trials"] for c in cells if c["kind"] == kind)
    ok = sum(c["correct"] for c in cells if c["kind"] == kind)
    return ok / n if n else None


def accuracy_where(cells, field, value):
    n = sum(c["trials"] for c in cells if c[field] == value)
    ok = sum(c["correct"] for c in cells if c[field] == value)
    return ok / n if n else None


def name(r):
    weights = f" · W {r['weights']}" if "--weights" in r["config"] else ""
    return f"`{r['attention']}`{weights}"


def speed_table(rows):
    """Measured decode time beside what the row's bytes predict at the reference bandwidth (rows
    written since the sweep measured one; since 2026-12-06 measured again before each row, so a
    column of its own), and the last decode step's split."""
    timed = [r for r in rows if r.get("status") == "ok" and "decode_ms_predicted" in r and "decode_ms" in r]
    if not timed:
        return
    per_row = len({r["reference_gb_s"] for r in timed}) > 1
    print()
    if per_row:
        print("Decode at the window's end against full attention's bandwidth at 512 tokens, measured before each row:")
    else:
        print(f"Decode at the window's end against full attention's {timed[0]['reference_gb_s']:.1f} GB/s at 512 tokens:")
    print()
    print("| configuration | KV type | read/token MiB | indexer MiB |" + (" reference GB/s |" if per_row else "") +
          " predicted ms | measured ms | ÷ predicted | last step: matmuls / attention / indexer ms |")
    print("|---|---|---:|---:|" + ("---:|" if per_row else "") + "---:|---:|---:|---|")
    for r in timed:
        split = r.get("decode_step_ms", {})
        parts = " / ".join(f"{split[k]:.2f}" for k in ("matmul", "attention", "index")) if split else "—"
        ref = f" {r['reference_gb_s']:.1f} |" if per_row else ""
        print(f"| {name(r)} | {r['kv_type']} | {mib(r['kv_bytes_read_per_token'])} | {mib(r.get('index_bytes_read_per_token', 0))} |{ref}"
              f" {r['decode_ms_predicted']:.2f} | {r['decode_ms']:.2f} | {r['decode_ms'] / r['decode_ms_predicted']:.2f} | {parts} |")


def main(path, prefill=True, model=None):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    rows = [r for r in rows if model is None or r.get("model", model) == model]
    full = next((r for r in rows if r.get("status") == "ok" and r["config"] == "full"), None)
    print("| configuration | KV type | KV MiB | KV ÷ full | read/token MiB | read ÷ full | PPL | ΔPPL % | KL | top-1 % "
          "| retrieval (passkey / multi-key) |" + (" prefill tok/s |" if prefill else "") + " decode tok/s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|" + ("---:|" if prefill else "") + "---:|")
    for r in rows:
        if r.get("status") != "ok":
            print(f"| {r['config']} | failed: {r.get('error', '')} |||||||||||")
            continue
        full_kv, full_read = r["kv_bytes_full"], (full or r)["kv_bytes_read_per_token"]
        retrieval = "—"
        if "retrieval_accuracy" in r:
            cells = r.get("retrieval_cells", [])
            kinds = [kind_accuracy(cells, k) for k in ("passkey", "multi_key")]
            retrieval = f"{r['retrieval_accuracy']:.2f} (" + " / ".join("—" if a is None else f"{a:.2f}" for a in kinds) + ")"
        print(f"| {name(r)} | {r['kv_type']} | {mib(r['kv_bytes'])} | {r['kv_bytes'] / full_kv:.2f} "
              f"| {mib(r['kv_bytes_read_per_token'])} | {r['kv_bytes_read_per_token'] / full_read:.2f} "
              f"| {r['ppl']:.3f} | {r['delta_ppl_pct']:+.2f} | {r['kl']:.4f} | {100 * r['top1']:.1f} "
              f"| {retrieval} |" + (f" {r['prefill_tok_s']:.0f} |" if prefill else "") + f" {r['decode_tok_s']:.1f} |")
    speed_table(rows)
    with_cells = [r for r in rows if r.get("status") == "ok" and r.get("retrieval_cells")]
    if not with_cells:
        return
    for field, label in (("length", "{} tokens"), ("depth", "depth {} %")):
        values = sorted({c[field] for r in with_cells for c in r["retrieval_cells"]})
        print()
        print("| configuration | KV type | " + " | ".join(label.format(v) for v in values) + " |")
        print("|---|---|" + "---:|" * len(values))
        for r in with_cells:
            cells = r["retrieval_cells"]
            print(f"| {name(r)} | {r['kv_type']} | " + " | ".join(f"{accuracy_where(cells, field, v):.2f}" for v in values) + " |")

if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--no-prefill"]
    model = None
    if "--model" in args:
        at = args.index("--model")
        if at + 1 >= len(args):
            sys.exit(__doc__)
        model = args[at + 1]
        del args[at:at + 2]
    if len(args) != 1:
        sys.exit(__doc__)
    main(args[0], prefill="--no-prefill" not in sys.argv[1:], model=model)
