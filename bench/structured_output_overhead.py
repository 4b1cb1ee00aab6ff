#!/usr/bin/env python3
"""What a JSON Schema costs while decoding: greedy `workbench-cli run --chat` with the schema, then
without it for exactly as many tokens (--ignore-eos -n N), alternating within each round so both
see the same machine load. Prints each schema's median decode tok/s both ways and their ratio, and
checks each constrained reply that ends by itself parses as JSON.
usage: bench/structured_output_overhead.py [MODEL] [--rounds 5] [-t THREADS]"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.path.join(ROOT, "build", "bin", "workbench-cli")
args = sys.argv[1:]
model = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
if args and not args[0].startswith("-"):
    model = args.pop(0)
rounds, threads = 5, []
while args:
    flag = args.pop(0)
    if flag == "--rounds":
        rounds = int(args.pop(0))
    elif flag == "-t":
        threads = ["-t", args.pop(0)]
    else:
        sys.exit(f"unknown option {flag}")

CASES = [
    ("person", "Invent a person and give their name, age and hobbies.",
     {"type": "object", "properties": {"name": {"type": "string", "maxLength": 30},
                                        "age": {"type": "integer", "minimum": 0, "maximum": 120},
                                        "hobbies": {"type": "array", "items": {"type": "string", "maxLength": 20}, "maxItems": 4}},
      "required": ["name", "age", "hobbies"]}),
    ("cities", "List twelve European cities with their countries.",
     {"type": "array", "minItems": 12, "maxItems": 12,
      "items": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 24},
                                                 "country": {"type": "string", "maxLength": 24}},
                "required": ["city", "country"]}}),
    ("any_object", "Describe a cat as a JSON object.", {"type": "object"}),
]


def run(prompt, extra):
    out = subprocess.run([CLI, "run", "-m", model, "--chat", "-p", prompt, "--temp", "0", "--json", *threads, *extra],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


with tempfile.TemporaryDirectory() as tmp:
    print(f"model {os.path.basename(model)}, {rounds} rounds, greedy, schema run then plain run of as many tokens")
    print(f"{'case':<12} {'tokens':>6} {'schema tok/s':>13} {'plain tok/s':>12} {'ratio':>6}")
    for name, prompt, schema in CASES:
        path = os.path.join(tmp, name + ".json")
        with open(path, "w") as f:
            json.dump(schema, f)
        flag = ["--json-schema", path]
        with_schema, plain, n_tokens = [], [], 0
        for _ in range(rounds):
            a = run(prompt, flag + ["-n", "600"])
            if a["stop_reason"] != "max_tokens":
                json.loads(a["text"])   # a constrained reply that ended by itself always parses
            n_tokens = len(a["tokens"])
            b = run(prompt, ["-n", str(n_tokens), "--ignore-eos"])
            with_schema.append(a["metrics"]["decode_tok_s"])
            plain.append(b["metrics"]["decode_tok_s"])
        ws, pl = statistics.median(with_schema), statistics.median(plain)
        print(f"{name:<12} {n_tokens:>6} {ws:>13.1f} {pl:>12.1f} {ws / pl:>6.3f}")
