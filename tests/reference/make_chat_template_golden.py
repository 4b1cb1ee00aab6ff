#!/usr/bin/env python3
# Renders the chat templates in tests/data/chat_templates/*.jinja with real Jinja (configured as
# Hugging Face's apply_chat_template configures it) over a fixed set of conversations and writes
# tests/data/chat_templates/golden.json, which test_chat_template compares our native renderer
# against byte for byte. Run after changing a template or a conversation; needs `jinja2`.
import json
import pathlib
import sys

try:
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment
except ImportError:
    sys.exit("make_chat_template_golden.py needs jinja2: pip install jinja2")

DATA_DIR = pathlib.Path(__file__).resolve().parent.parent / "data" / "chat_templates"

# file, family detect() must report, the special-token text the model's tokenizer_config.json
# passes as bos_token/eos_token, and the default system prompt detect() must extract.
TEMPLATES = [
    ("chatml.jinja", "chatml", "<|im_start|>", "<|im_end|>",
     "You are a helpful AI assistant named SmolLM, trained by Hugging Face"),       # SmolLM2 (from the GGUF)
    ("chatml_qwen2.jinja", "chatml", "", "<|im_end|>", "You are a helpful assistant."),  # Qwen2-Instruct
    ("chatml_plain.jinja", "chatml", "<s>", "<|im_end|>", ""),                         # OpenHermes 2.5
    ("llama3.jinja", "llama3", "<|begin_of_text|>", "<|eot_id|>", ""),                 # Llama 3.0 Instruct
    ("llama3_2.jinja", "llama3", "<|begin_of_text|>", "<|eot_id|>", ""),               # Llama 3.2 Instruct
    ("gemma.jinja", "gemma", "<bos>", "<eos>", ""),                                    # Gemma 3 IT
    ("gemma2.jinja", "gemma", "<bos>", "<eos>", ""),                                   # Gemma 2 IT
    ("llama2.jinja", "llama2", "<s>", "</s>", ""),                                     # Llama-2-chat
    ("mistral.jinja", "mistral", "<s>", "</s>", ""),                                   # Mistral-7B-Instruct-v0.1
    ("phi3.jinja", "phi3", "<s>", "<|endoftext|>", ""),                                # Phi-3.5-mini-instruct
    ("phi3_mini_4k.jinja", "phi3", "<s>", "<|endoftext|>", ""),                        # Phi-3-mini-4k-instruct
]


def msg(role, content):
    return {"role": role, "content": content}


# Conversations cover: one turn, system or not, multi-turn ending on either side, whitespace the
# templates trim (ASCII and Unicode spaces), an empty system prompt, an empty conversation, and
# text that looks like template syntax.
CONVERSATIONS = {
    "one_turn": [msg("user", "Hello!")],
    "system_one_turn": [msg("system", "You are terse."), msg("user", "What is 2+2?")],
    "multi_turn": [msg("user", "Hi"), msg("assistant", "Hello! How can I help?"), msg("user", "Tell me a joke.")],
    "system_multi_turn": [
        msg("system", "Answer in French."),
        msg("user", "Good morning"),
        msg("assistant", "Bonjour"),
        msg("user", "Thank you"),
        msg("assistant", "De rien"),
    ],
    "whitespace": [
        msg("user", "  padded question \n"),
        msg("assistant", "\n\t answer with spaces  "),
        msg("user", "\u00a0next\u3000"),
    ],
    "system_whitespace": [msg("system", "  Be brief.\n"), msg("user", " line one\nline two ")],
    "empty_system": [msg("system", ""), msg("user", "Anyone there?")],
    "unicode": [msg("user", "Grüße aus Köln 🌍 — 日本語"), msg("assistant", "Привет")],
    "template_syntax": [msg("user", "Is {{ x }} or {% if %} or '<|im_end|>' special?")],
    "empty": [],
}


def raise_exception(message):
    raise ValueError(message)


def make_environment():
    # The same settings transformers uses for chat templates.
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.globals["raise_exception"] = raise_exception
    return env


def main():
    env = make_environment()
    golden = {"conversations": CONVERSATIONS, "templates": []}
    for file_name, family, bos, eos, default_system in TEMPLATES:
        template = env.from_string((DATA_DIR / file_name).read_text(encoding="utf-8"))
        entry = {"file": file_name, "family": family, "bos_token": bos, "eos_token": eos,
                 "default_system": default_system, "cases": [], "skipped": []}
        for name, messages in CONVERSATIONS.items():
            for add_generation_prompt in (True, False):
                try:
                    text = template.render(messages=messages, add_generation_prompt=add_generation_prompt,
                                           bos_token=bos, eos_token=eos)
                except Exception as exc:  # the template rejects this conversation (no system role, ...)
                    entry["skipped"].append({"conversation": name, "add_generation_prompt": add_generation_prompt,
                                             "reason": f"{type(exc).__name__}: {exc}"})
                    continue
                entry["cases"].append({"conversation": name, "add_generation_prompt": add_generation_prompt,
                                       "expected": text})
        golden["templates"].append(entry)
        print(f"{file_name}: {len(entry['cases'])} cases, {len(entry['skipped'])} skipped")
    out = DATA_DIR / "golden.json"
    out.write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
