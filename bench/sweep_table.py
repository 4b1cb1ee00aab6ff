#!/usr/bin/env python3
"""Renders `workbench-cli sweep -o` rows as the markdown tables of docs/VARIANTS.md: one row a
configuration (memory, speed, perplexity figures, retrieval), then decode time measured against
the time the row's bytes predict (rows that carry a prediction), then retrieval accuracy with its
Wilson interval and paired against full attention prompt by prompt (rows that kept each trial's
outcome), then by prompt length and by the depth of the fact for every row that measured it.
Usage: bench/sweep_table.py [--no-prefill] [--model FILE.gguf] docs/variants_sweep.jsonl
--no-prefill leaves out the prefill column (rows measured before commit db985ca timed a
one-token step instead of the window for variants that share a cached prefix).
--model keeps one model's rows where a file holds several (rows written before rows named their
model are kept for any). Remote servers' rows (sweep --remote) show their retrieval and predicted
KV bytes; their other columns are dashes."""
import json
import math
import sys

Z95 = 1.959963984540054


def mib(b):
    return f"{b / 2**20:.1f}"


def kind_accuracy(cells, kind):
    n = sum(c["trials"] for c in cells if c["kind"] == kind)
    ok = sum(c["correct"] for c in cells if c["kind"] == kind)
    return ok / n if n else None


def accuracy_where(cells, field, value):
    n = sum(c["trials"] for c in cells if c.get(field) == value)
    ok = sum(c["correct"] for c in cells if c.get(field) == value)
    return ok / n if n else None


def wilson(k, n):
    """The 95 % Wilson score interval of k successes in n trials."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + Z95 * Z95 / (2 * n)) / (1 + Z95 * Z95 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95 * Z95 / (4 * n * n)) / (1 + Z95 * Z95 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def mcnemar_p(b, c):
    """McNemar's exact test: two-sided binomial p of the discordant pairs."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def outcomes(r):
    cells = r.get("retrieval_cells", [])
    if not cells or any("outcomes" not in c for c in cells):
        return None
    return "".join(c["outcomes"] for c in cells)


def kinds_of(rows):
    seen = []
    for r in rows:
        for c in r.get("retrieval_cells", []):
            if c["kind"] not in seen:
                seen.append(c["kind"])
    return seen or ["passkey", "multi_key"]


def paired_table(rows, full):
    """Each row's retrieval accuracy with its Wilson interval, and against full attention on the
    same seeded prompts: the difference, the discordant prompts and McNemar's exact p."""
    base = outcomes(full) if full else None
    paired = [r for r in rows if r.get("status") == "ok" and outcomes(r) is not None]
    if not paired:
        return
    print()
    print("| configuration | KV type | found / n | accuracy (95 % Wilson) | − full | only here / only full | McNemar p |")
    print("|---|---|---:|---|---:|---:|---:|")
    for r in paired:
        mine = outcomes(r)
        k, n = mine.count("1"), len(mine)
        low, high = wilson(k, n)
        row = f"| {name(r)} | {r['kv_type']} | {k} / {n} | {k / n:.3f} ({low:.3f}–{high:.3f}) |"
        if base is not None and len(base) == n and r is not full:
            here = sum(1 for a, b in zip(mine, base) if a == "1" and b == "0")
            there = sum(1 for a, b in zip(mine, base) if a == "0" and b == "1")
            row += f" {(k - base.count('1')) / n:+.3f} | {here} / {there} | {mcnemar_p(here, there):.3g} |"
        else:
            row += " — | — | — |"
        print(row)


def name(r):
    if r.get("backend") == "remote":
        # A remote server's row (sweep --remote): its KV type as it reported it or the user declared it.
        layout = "" if r["attention"] == "full" else f" `{r['attention']}`"
        return f"{r['server']} server (remote{'; KV type ' + r['kv_source'] if r.get('kv_source') else ''}){layout}"
    weights = f" · W {r['weights']}" if "--weights" in r["config"] else ""
    return f"`{r['attention']}`{weights}"


def figure(r, key, fmt, scale=1.0):
    """A row's figure, or a dash where it has none (a remote row measures retrieval alone)."""
    return format(r[key] * scale, fmt) if key in r else "—"


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
    kinds = kinds_of(rows)
    print("| configuration | KV type | KV MiB | KV ÷ full | read/token MiB | read ÷ full | PPL | ΔPPL % | KL | top-1 % "
          f"| retrieval ({' / '.join(k.replace('_', '-') for k in kinds)}) |" + (" prefill tok/s |" if prefill else "") + " decode tok/s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|" + ("---:|" if prefill else "") + "---:|")
    for r in rows:
        if r.get("status") != "ok":
            print(f"| {r['config']} | failed: {r.get('error', '')} |||||||||||")
            continue
        full_kv, full_read = r["kv_bytes_full"], (full or r).get("kv_bytes_read_per_token")
        retrieval = "—"
        if "retrieval_accuracy" in r:
            cells = r.get("retrieval_cells", [])
            by_kind = [kind_accuracy(cells, k) for k in kinds]
            retrieval = f"{r['retrieval_accuracy']:.2f} (" + " / ".join("—" if a is None else f"{a:.2f}" for a in by_kind) + ")"
        read = r.get("kv_bytes_read_per_token")
        print(f"| {name(r)} | {r['kv_type']} | {mib(r['kv_bytes'])} | {r['kv_bytes'] / full_kv:.2f} "
              f"| {'—' if read is None else mib(read)} | {'—' if read is None or not full_read else f'{read / full_read:.2f}'} "
              f"| {figure(r, 'ppl', '.3f')} | {figure(r, 'delta_ppl_pct', '+.2f')} | {figure(r, 'kl', '.4f')} | {figure(r, 'top1', '.1f', 100)} "
              f"| {retrieval} |" + (f" {figure(r, 'prefill_tok_s', '.0f')} |" if prefill else "") + f" {figure(r, 'decode_tok_s', '.1f')} |")
    speed_table(rows)
    paired_table(rows, full)
    with_cells = [r for r in rows if r.get("status") == "ok" and r.get("retrieval_cells")]
    if not with_cells:
        return
    for field, label in (("length", "{} tokens"), ("depth", "depth {} %")):
        values = sorted({c[field] for r in with_cells for c in r["retrieval_cells"] if c.get(field) is not None})
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
