#!/usr/bin/env python3
# Renders the real chat templates in tests/data/chat_templates/corpus/ (from the llama-cpp-python
# 0.3.36 sdist's vendor/llama.cpp/models/templates/, Gemma 3's and SmolLM2's from our own files;
# Llama 3.3's is byte-identical to 3.1's) over conversations with system prompts, several turns,
# tools, tool calls (arguments as an object and as a string) and tool results, and thinking on and
# off, with jinja2 configured as transformers' apply_chat_template configures it (make_jinja_golden's
# environment: its tojson, raise_exception, strftime_now pinned; `tools` and `documents` always
# passed, None when absent). Writes tests/data/chat_templates/corpus/golden.json: each template ×
# conversation's output, or the error jinja2 raised. Needs `jinja2`.
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from make_jinja_golden import environment  # noqa: E402

CORPUS = pathlib.Path(__file__).resolve().parent.parent / "data" / "chat_templates" / "corpus"

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Get the weather",
           "parameters": {"type": "object", "properties": {
               "city": {"type": "string", "description": "City name"},
               "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
               "opts": {"type": "object", "properties": {"days": {"type": "integer"}}}},
               "required": ["city"]}}}
CALL = {"id": "abc123def", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "K\u00f6ln"}}}
STR_CALL = dict(CALL, function=dict(CALL["function"], arguments='{"city": "K\u00f6ln"}'))

CONVERSATIONS = {
    "basic": dict(messages=[{"role": "user", "content": "Hello!"}], add_generation_prompt=True),
    "no_generation_prompt": dict(messages=[{"role": "user", "content": "Hello!"}, {"role": "assistant", "content": "Hi there."}],
                                 add_generation_prompt=False),
    "system_multi": dict(messages=[{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Hi"},
                                   {"role": "assistant", "content": "<think>\nhmm\n</think>\n\nHello"},
                                   {"role": "user", "content": "  Bye \u00a0"}], add_generation_prompt=True),
    "tools": dict(messages=[{"role": "user", "content": "Weather in K\u00f6ln?"},
                            {"role": "assistant", "content": "", "tool_calls": [CALL]},
                            {"role": "tool", "content": "{\"temp\": 20}", "tool_call_id": "abc123def"},
                            {"role": "assistant", "content": "It is 20."}, {"role": "user", "content": "Thanks"}],
                  tools=[WEATHER], add_generation_prompt=True),
    "tools_null_content": dict(messages=[{"role": "user", "content": "Weather in K\u00f6ln?"},
                                         {"role": "assistant", "content": None, "tool_calls": [CALL]},
                                         {"role": "tool", "content": "{\"temp\": 20}", "tool_call_id": "abc123def"}],
                               tools=[WEATHER], add_generation_prompt=True),
    "tools_string_arguments": dict(messages=[{"role": "system", "content": "Use tools."}, {"role": "user", "content": "Weather in K\u00f6ln?"},
                                             {"role": "assistant", "content": "", "tool_calls": [STR_CALL]},
                                             {"role": "tool", "content": "{\"temp\": 20}", "tool_call_id": "abc123def"}],
                                   tools=[WEATHER], add_generation_prompt=True),
    "no_think": dict(messages=[{"role": "user", "content": "Hi"}], add_generation_prompt=True, enable_thinking=False),
    "think": dict(messages=[{"role": "user", "content": "Hi"}], add_generation_prompt=True, enable_thinking=True),
}
SPECIAL = dict(bos_token="<BOS>", eos_token="<EOS>")


def main():
    env = environment()
    rows = []
    for path in sorted(CORPUS.glob("*.jinja")):
        template = env.from_string(path.read_text(encoding="utf-8"))
        for name, conversation in CONVERSATIONS.items():
            variables = {"tools": None, "documents": None, **SPECIAL, **conversation}
            row = {"template": path.name, "conversation": name, "variables": variables}
            try:
                row["expected"] = template.render(**variables)
            except Exception as e:
                row["error"] = f"{type(e).__name__}: {e}"
            rows.append(row)
    out = CORPUS / "golden.json"
    out.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}: {len(rows)} renders, {sum('error' in r for r in rows)} that jinja2 refuses")


if __name__ == "__main__":
    main()
