#!/usr/bin/env python3
# Records llama.cpp's tokenizations (via llama-cpp-python) as goldens for test_tokenizer: the
# default model's byte-level BPE vocab under several pre-tokenizers, and a tiny SentencePiece vocab
# generated here. Deterministic: fixed strings plus seeded random mixes; rerun after changing them.
"""Usage: make_tokenizer_golden.py [--model PATH] [--out DIR] [--work DIR]

Writes DIR/tokenizer_golden_<name>.json for name in smollm, llama-bpe, qwen2, default, gpt-2, spm,
gemma3 (Gemma 3's 262k SentencePiece vocab, when --gemma3 exists), and DIR/spm_tiny.gguf (the SentencePiece vocab, small enough to commit). The BPE variants are
vocab-only copies of the model with tokenizer.ggml.pre changed; they go to --work, never to the
repo. Needs: pip install llama-cpp-python gguf numpy.
"""

import argparse
import ctypes
import json
import os
import random
import sys
from collections import Counter

import gguf
import llama_cpp
from llama_cpp import Llama

BPE_VARIANTS = ["llama-bpe", "qwen2", "default", "gpt-2"]

# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------

FIXED_TEXTS = [
    "", " ", "  ", "   ", "\n", "\n\n", "\t", "\r\n", " \n ", "a", "Hello", "Hello world", " Hello world",
    "Hello world ", "Hello  world", "Hello   world   ", "Hello\nworld", "Hello\n\nworld", "Hello \n world",
    "Hello\t\tworld", "   leading spaces", "trailing spaces   ", "\t\tindented with tabs",
    "line one\r\nline two\r\n", "  \n\n  \n", "end with newline\n",
    # contractions, either case
    "It's", "I'm here", "they're", "we've", "you'll", "he'd", "don't", "IT'S LOUD", "I'M", "They'RE",
    "WE'VE YOU'LL HE'D", "y'all", "'s", "' s", "rock 'n' roll", "the dog' s bone", "Ma'am, it's '90s",
    "'twas the night", "o'clock", "don ' t", "it ' s", "I 've", "you 're", "she 'd", "we 'll", "x 'm",
    # punctuation and symbols
    "Hello, world! How are you? I'm fine.", "a . b , c ! d ?", "wait... what?!", "(parens) [brackets] {braces}",
    "email@example.com", "https://example.com/path?q=1&x=2#frag",
    "C++ is > C; a->b; x<=y; ~tilde^caret|pipe$dollar+plus=equal`backtick",
    "\"double\" 'single' `back`", "100% sure #hashtag @mention", "a--b---c", "!!!???...", "***bold*** _under_",
    "¿Qué? ¡Sí!", "«guillemets» „quotes“ ‘curly’ “double”", "—em dash– en dash", "…ellipsis",
    # numbers
    "1", "12", "123", "1234", "12345", "1234567890", "3.14159", "1,000,000", "-42", "+7", "0x1F", "2024-01-15",
    "phone: 555-1234", "1st 2nd 3rd 4th", "31415926535897932384626433832795028841971", " 123 456", "a1b2c3",
    "٣٤٥ arabic-indic digits", "½ ¼ ² ³ ① Ⅻ", "१२३ devanagari digits", "v1.2.3-rc4", "$1,234.56",
    "007 0000 00000", "x12y345z", " 12 123 1234 12345 123456", "1234567 89012", "call 555 1234 now",
    # accents, scripts
    "café naïve résumé façade", "Ünïcödé", "e\u0301 combining acute", "Straße", "Καλημέρα κόσμε",
    "Привет, мир!", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया", "สวัสดีชาวโลก", "안녕하세요 세계",
    "こんにちは世界、カタカナ", "你好，世界！我爱编程。", "中文English混合123", "გამარჯობა", "Բարեւ",
    "வணக்கம்", "হ্যালো", "ሰላም ልዑል", "Tokyo東京Токио", "ＡＢＣ１２３ fullwidth", "ﬁ ligature",
    "Việt Nam", "Zażółć gęślą jaźń", "Ελληνικά και русский", "ÆØÅ æøå", "İstanbul ı", "ǅungla",
    # letters, digits and punctuation new in Unicode 15.0/15.1 (PCRE2 10.42 predates them)
    "\U0001e030's \U0001e4d0\U0001e4d1 \U0001e4f0\U0001e4f1\U0001e4f2 x\U0001d2c0\U0001d2c1",
    "\U00011f04\U00011f05\U00011f43 \U00031350\U0002ebf0\U0002ebf1 \U00011b00!",
    # emoji
    "😀", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "❤️", "🇫🇷🇯🇵", "I ❤️ 🍕!", "✨🚀 launch", "emoji😀inside", "😀😃😄😁",
    "👩🏾‍💻 writes code", "🫠 melting",
    # symbols and unusual whitespace
    "∑∫√∞≠≤≥", "€100 £50 ¥1000 ₹500", "NBSP\u00a0here", "em\u2003space", "ideographic\u3000space",
    "zero\u200bwidth", "\u0085NEL", "line\u2028separator", "soft\u00adhyphen", "tab\tseparated\tvalues",
    "\x00\x01 control chars", "del\x7f", "a\u00a0\u00a0b", "x \u3000 y", "\u2003\u2003", "\u00a0", "trail\u00a0",
    # code
    "def f(x):\n    return x * 2\n",
    "class A:\n    def __init__(self):\n        self.x = 1  # comment\n\n\n",
    "int main() {\n\tprintf(\"%d\\n\", 42);\n\treturn 0;\n}\n",
    "for (int i = 0; i < n; ++i) { sum += a[i]; }",
    '{"key": [1, 2, 3], "nested": {"a": null, "b": true}}',
    "<div class=\"x\">Hi &amp; bye</div>",
    "| col1 | col2 |\n|------|------|\n| a    | b    |",
    "git commit -m 'fix: tokenizer' && ls -la ~/",
    "^(?:[a-z0-9]+\\.)*[a-z]{2,}$",
    "key: value\n  nested:   \n    - item1  \n    - item2\n",
    "    \n\tmixed\t \n  ",
    # special-token texts inside ordinary text
    "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n", "<|endoftext|>", "text<|im_end|>",
    "<|im_start|><|im_end|>", "<|im_start", "<|im_end|x", "<repo_name>foo<file_sep>bar", "  <|im_start|>  ",
    "<|im_start|>system\nYou are helpful.<|im_end|>", "<s>hello</s>", "<unk>", "a<s>b", "<sep> split <sep>",
    " <s> ", "</s></s>",
]

# Inputs that are not valid UTF-8: llama.cpp reads each bad byte as U+FFFD (BPE) or a byte (SPM).
INVALID_UTF8 = [b"\xff", b"abc\xc3", b"\xe4\xb8", b"\xed\xa0\x80 surrogate", b"\xc0\xaf overlong",
                b"\x80\x80text", b"ok \xf8 bad", b"\xe4\xb8\xad\xe6"]

FRAGMENTS = [
    "the", "quick", "brown", "fox", "jumps", "over", " lazy", " dog", "Hello", "World", "it's", "we're",
    "DON'T", "42", "3.14", "1000000", "2023", " 7", "!", "?", ".", ",", "...", ";", ":", "-", "(", ")", "\"",
    "'", "#", "@", "$", "%", "&", "*", "+", "=", "/", "\\", "<", ">", "|", "~", "^", "`", "[", "]", "{", "}",
    " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n", "\t\t", "    ",
    "café", "naïve", "Straße", "Привет", "мир", "你好", "世界", "こんにちは", "안녕", "مرحبا", "שלום", "नमस्ते",
    "😀", "👍🏽", "👨‍👩‍👧", "🇯🇵", "❤️", "✨", "∞", "€", "½", "\u00a0", "\u3000", "\u200b",
    "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<s>", "</s>", "<sep>", "<unk>",
    "def", "return", "x = 1", "if (a < b)", "{}", "[]", "->", "::", "==", "!=", "0x", "ab", "cd", "ef",
]


def random_texts(count, seed):
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        n = rng.randint(1, 12)
        texts.append("".join(rng.choice(FRAGMENTS) for _ in range(n)))
    return texts


def all_inputs():
    inputs = [t.encode("utf-8") for t in FIXED_TEXTS] + INVALID_UTF8
    inputs += [t.encode("utf-8") for t in random_texts(200, seed=20240611)]
    seen, unique = set(), []
    for b in inputs:
        if b not in seen:
            seen.add(b)
            unique.append(b)
    return unique


# ---------------------------------------------------------------------------------------------
# Vocabularies
# ---------------------------------------------------------------------------------------------

# SmolLM2 never merges digits (its own pre-tokenizer isolates them), which would hide how the other
# pre-tokenizers group digit runs. The variants therefore get these extra tokens and merges,
# appended after the model's own; the goldens list them so the C++ test can append them too.
EXTRA_TOKENS = ["12", "123", "1234", "34", "345", "56", "78", "90", "00", "000", "\u01201", "\u012012", "\u01202"]
EXTRA_MERGES = ["1 2", "12 3", "123 4", "3 4", "34 5", "5 6", "7 8", "9 0", "0 0", "00 0", "\u0120 1", "\u01201 2",
                "\u0120 2"]


def copy_with_pre(src_path, dst_path, pre):
    """Vocab-only copy of a GGUF (all metadata, no tensors) with tokenizer.ggml.pre replaced and
    EXTRA_TOKENS/EXTRA_MERGES appended."""
    reader = gguf.GGUFReader(src_path)
    arch = reader.fields["general.architecture"].contents()
    writer = gguf.GGUFWriter(dst_path, arch)
    n_tokens = len(reader.fields["tokenizer.ggml.tokens"].contents()) + len(EXTRA_TOKENS)
    extend = {
        "tokenizer.ggml.tokens": EXTRA_TOKENS,
        "tokenizer.ggml.token_type": [1] * len(EXTRA_TOKENS),
        "tokenizer.ggml.merges": EXTRA_MERGES,
    }
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        value = pre if key == "tokenizer.ggml.pre" else field.contents()
        if key in extend:
            value = value + extend[key]
        if key.endswith(".vocab_size"):
            value = n_tokens
        vtype = field.types[0]
        sub = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(key, value, vtype, sub)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


SPM_CORPUS = (
    "the quick brown fox jumps over the lazy dog . the dog sleeps and the fox runs away . "
    "hello world , hello there , how are you today ? i am fine , thank you very much ! "
    "tokenizers split text into pieces ; the pieces are then mapped to numbers that models read . "
    "this is a tiny vocabulary made for testing the sentencepiece path of the inference workbench . "
    "numbers like 123 and 2024 appear , as do words such as running , jumped , nation and station . "
    "café au lait . привет мир . 你好 世界 。 Hello World The Quick Brown Fox . "
)


def build_spm_vocab(n_merges=220):
    """A toy SentencePiece BPE vocab learned from SPM_CORPUS: control tokens, 256 byte tokens, the
    corpus characters and n_merges merged pieces, with scores that prefer earlier merges."""
    words = Counter("\u2581" + w for w in SPM_CORPUS.split())
    seqs = {w: list(w) for w in words}
    chars = Counter()
    for w, c in words.items():
        for ch in w:
            chars[ch] += c
    pieces = []  # (text, score)
    merged = []
    for _ in range(n_merges):
        pairs = Counter()
        for w, c in words.items():
            s = seqs[w]
            for a, b in zip(s, s[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        (a, b), _ = max(sorted(pairs.items()), key=lambda kv: kv[1])
        merged.append(a + b)
        for w in words:
            s, out, i = seqs[w], [], 0
            while i < len(s):
                if i + 1 < len(s) and s[i] == a and s[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(s[i])
                    i += 1
            seqs[w] = out
    for i, text in enumerate(merged):
        pieces.append((text, -float(i)))
    for i, (ch, _) in enumerate(sorted(chars.items(), key=lambda kv: (-kv[1], kv[0]))):
        if ch not in merged:
            pieces.append((ch, -1000.0 - i))
    tokens = [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3)]
    tokens += [("<0x%02X>" % b, 0.0, 6) for b in range(256)]
    tokens += [("<sep>", 0.0, 4)]  # user-defined: always split out, even without parse_special
    seen = {t[0] for t in tokens}
    for text, score in pieces:
        if text not in seen:
            seen.add(text)
            tokens.append((text, score, 1))
    return tokens


def write_spm_gguf(path):
    tokens = build_spm_vocab()
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_name("spm-tiny-test-vocab")
    writer.add_context_length(128)
    writer.add_embedding_length(64)
    writer.add_block_count(1)
    writer.add_feed_forward_length(128)
    writer.add_head_count(2)
    writer.add_head_count_kv(2)
    writer.add_rope_dimension_count(32)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_tokenizer_model("llama")
    writer.add_token_list([t[0] for t in tokens])
    writer.add_token_scores([t[1] for t in tokens])
    writer.add_token_types([t[2] for t in tokens])
    # No special-token ids or add_* flags: the loader must apply llama.cpp's SPM defaults.
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


# ---------------------------------------------------------------------------------------------
# Recording
# ---------------------------------------------------------------------------------------------

def jbytes(b):
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": b.hex()}


def detokenize(vocab, ids, special):
    arr = (llama_cpp.llama_token * max(1, len(ids)))(*ids)
    size = 64 + 64 * len(ids)
    buf = ctypes.create_string_buffer(size)
    n = llama_cpp.llama_detokenize(vocab, arr, len(ids), buf, size, False, special)
    assert n >= 0, n
    return buf.raw[:n]


def piece(vocab, token, special):
    buf = ctypes.create_string_buffer(512)
    n = llama_cpp.llama_token_to_piece(vocab, token, buf, 512, 0, special)
    assert n >= 0, n
    return buf.raw[:n]


def record(name, path, inputs, pre_label, extended):
    llm = Llama(model_path=path, vocab_only=True, verbose=False)
    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
    bos = llama_cpp.llama_vocab_bos(vocab)
    eos = llama_cpp.llama_vocab_eos(vocab)
    add_bos = bool(llama_cpp.llama_vocab_get_add_bos(vocab))
    add_eos = bool(llama_cpp.llama_vocab_get_add_eos(vocab))
    prefix = [bos] if add_bos else []
    suffix = [eos] if add_eos else []
    cases = []
    for text in inputs:
        ids = llm.tokenize(text, add_bos=False, special=False)
        ids_special = llm.tokenize(text, add_bos=True, special=True)
        case = {"text": jbytes(text), "ids": ids}
        if ids_special != prefix + ids + suffix:
            case["ids_special"] = ids_special
        dec = detokenize(vocab, ids, False)
        if dec != text:
            case["decode"] = jbytes(dec)
        dec_special = detokenize(vocab, ids_special, True)
        if dec_special != text:
            case["decode_special"] = jbytes(dec_special)
        cases.append(case)
    control = [i for i in range(n_vocab) if llama_cpp.llama_vocab_get_attr(vocab, i) & 8]
    eog = [i for i in range(n_vocab) if llama_cpp.llama_vocab_is_eog(vocab, i)]
    rng = random.Random(7)
    piece_ids = sorted(set(list(range(min(n_vocab, 300))) + rng.sample(range(n_vocab), min(n_vocab, 300))))
    pieces = [[i, piece(vocab, i, False).hex(), piece(vocab, i, True).hex()] for i in piece_ids]
    return {
        "generator": "tests/reference/make_tokenizer_golden.py, llama-cpp-python " + llama_cpp.__version__,
        "vocab": name, "pre": pre_label, "n_vocab": n_vocab, "bos_id": bos, "eos_id": eos,
        "add_bos": add_bos, "add_eos": add_eos, "eog_ids": eog, "control_ids": control,
        "note": "ids: add_special=false, parse_special=false. ids_special (add_special=true, "
                "parse_special=true) is given only when it differs from [bos if add_bos] + ids + "
                "[eos if add_eos]. decode/decode_special (llama_detokenize of ids / ids_special, "
                "rendering specials for the latter) are given only when they differ from text. "
                "A {\"hex\": ...} value stands for bytes that are not valid UTF-8. pieces: "
                "[id, hex(token_to_piece(special=false)), hex(token_to_piece(special=true))]. "
                "extra_tokens/extra_merges: appended to the model's vocab (type normal) before "
                "tokenizing.",
        "extra_tokens": EXTRA_TOKENS if extended else [], "extra_merges": EXTRA_MERGES if extended else [],
        "cases": cases, "pieces": pieces,
    }


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.path.join(here, "..", "..", "models", "SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("--out", default=os.path.join(here, "..", "data", "tokenizer"))
    ap.add_argument("--gemma3", default=os.path.join(here, "..", "..", "models", "gemma-3-270m-q4_k_m.gguf"))
    ap.add_argument("--work", default="/tmp/wb_tokenizer_golden")
    ap.add_argument("--only", help="write just this golden (e.g. gemma3)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)
    inputs = all_inputs()

    jobs = [("smollm", args.model, "smollm", False)]
    for pre in BPE_VARIANTS:
        path = os.path.join(args.work, "smollm2_vocab_pre_%s.gguf" % pre)
        copy_with_pre(args.model, path, pre)
        jobs.append((pre, path, pre, True))
    spm_path = os.path.join(args.out, "spm_tiny.gguf")
    write_spm_gguf(spm_path)
    jobs.append(("spm", spm_path, "", False))
    if os.path.exists(args.gemma3):
        jobs.append(("gemma3", args.gemma3, "", False))

    for name, path, pre, extended in jobs:
        if args.only and name != args.only:
            continue
        golden = record(name, path, inputs, pre, extended)
        out = os.path.join(args.out, "tokenizer_golden_%s.json" % name)
        with open(out, "w", encoding="utf-8") as f:
            json.dump(golden, f, ensure_ascii=False, separators=(",", ":"))
            f.write("\n")
        print("%s: %d cases -> %s (%d bytes)" % (name, len(golden["cases"]), out, os.path.getsize(out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
