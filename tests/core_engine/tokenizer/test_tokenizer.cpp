// Tokenizer checks against llama.cpp goldens (tests/reference/make_tokenizer_golden.py): the default
// model's BPE vocab under five pre-tokenizers and a tiny SentencePiece vocab, ids and decodes must
// match exactly. Also streaming UTF-8, special-token parsing, and errors for malformed vocabs.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "tests/skip_missing.h"
#include "tests/test_models.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_loader.h"

using namespace workbench;

namespace {

const QString kDataDir = QStringLiteral(WB_TEST_DATA_DIR "/tokenizer/");
constexpr const char* kNoModel = "default model not present: run installer/bootstrap.sh (or copy "
                                 "SmolLM2-135M-Instruct.Q4_1.gguf to models/)";

QJsonObject read_golden(const QString& name) {
    QFile file(kDataDir + "tokenizer_golden_" + name + ".json");
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

// A golden byte string: plain JSON text, or {"hex": ...} for bytes that are not UTF-8.
std::string golden_bytes(const QJsonValue& value) {
    if (value.isObject()) return QByteArray::fromHex(value.toObject()["hex"].toString().toLatin1()).toStdString();
    return value.toString().toStdString();
}

std::vector<TokenId> golden_ids(const QJsonValue& value) {
    std::vector<TokenId> ids;
    for (const QJsonValue& v : value.toArray()) ids.push_back(v.toInt());
    return ids;
}

// Text readable in a failure message: escapes for control and non-ASCII bytes.
std::string printable(const std::string& s) {
    std::string out;
    for (unsigned char c : s) {
        if (c >= 0x20 && c < 0x7F && c != '\\') {
            out.push_back(static_cast<char>(c));
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        }
    }
    return out;
}

std::string ids_text(const std::vector<TokenId>& ids) {
    std::string out = "[";
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i) out += ',';
        out += std::to_string(ids[i]);
    }
    return out + "]";
}

// Structurally complete UTF-8: no sequence cut short at the end or in the middle.
bool whole_utf8(const std::string& s) {
    for (size_t i = 0; i < s.size();) {
        const auto lead = static_cast<unsigned char>(s[i]);
        const size_t len = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
        if (len == 0 || i + len > s.size()) return false;
        for (size_t k = 1; k < len; ++k) {
            if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
        }
        i += len;
    }
    return true;
}

// The tiny SentencePiece vocab lives next to its golden. *.gguf is git-ignored, so a checkout that
// lacks it was committed without `git add -f`; say so instead of failing obscurely.
const std::string kSpmVocabPath = (kDataDir + "spm_tiny.gguf").toStdString();
constexpr const char* kNoSpmVocab = "tests/data/tokenizer/spm_tiny.gguf is missing (git-ignored as *.gguf: commit it "
                                    "with git add -f, or rerun tests/reference/make_tokenizer_golden.py)";

Result<TokenizerVocab> load_vocab(const std::string& path) {
    WB_ASSIGN_OR_RETURN(std::unique_ptr<GgufFile> file, GgufFile::open(path));
    return load_tokenizer_vocab(*file);
}

Result<TokenizerVocab> load_vocab_from(const GgufWriter& writer) {
    const std::vector<uint8_t> bytes = writer.to_bytes();
    WB_ASSIGN_OR_RETURN(std::unique_ptr<GgufFile> file, GgufFile::from_memory(bytes, "crafted.gguf"));
    return load_tokenizer_vocab(*file);
}

// Compares a tokenizer with one golden file; returns the first mismatch (and how many), or "".
std::string check_against_golden(const Tokenizer& tok, const QJsonObject& golden) {
    std::string first;
    int mismatches = 0;
    const auto fail = [&](const std::string& what) {
        if (mismatches++ == 0) first = what;
    };
    const auto expect_ids = [&](const char* kind, const std::string& text, const std::vector<TokenId>& want,
                                const std::vector<TokenId>& got) {
        if (want != got) {
            fail(std::string(kind) + " of \"" + printable(text) + "\": llama.cpp " + ids_text(want) + ", ours " +
                 ids_text(got));
        }
    };
    const auto expect_text = [&](const char* kind, const std::string& text, const std::string& want,
                                 const std::string& got) {
        if (want != got) {
            fail(std::string(kind) + " of \"" + printable(text) + "\": llama.cpp \"" + printable(want) +
                 "\", ours \"" + printable(got) + "\"");
        }
    };

    const TokenizerVocab& v = tok.vocab();
    if (tok.n_vocab() != golden["n_vocab"].toInt()) fail("n_vocab differs");
    if (v.bos_id != golden["bos_id"].toInt() || v.eos_id != golden["eos_id"].toInt()) fail("bos/eos ids differ");
    if (v.add_bos != golden["add_bos"].toBool() || v.add_eos != golden["add_eos"].toBool()) fail("add_bos/eos differ");
    expect_ids("eog ids", "", golden_ids(golden["eog_ids"]), tok.eog_ids());
    std::vector<TokenId> control;
    for (TokenId id = 0; id < tok.n_vocab(); ++id) {
        if (tok.is_control(id)) control.push_back(id);
    }
    expect_ids("control ids", "", golden_ids(golden["control_ids"]), control);

    for (const QJsonValue& value : golden["cases"].toArray()) {
        const QJsonObject c = value.toObject();
        const std::string text = golden_bytes(c["text"]);
        const std::vector<TokenId> ids = golden_ids(c["ids"]);
        std::vector<TokenId> ids_special;
        if (c.contains("ids_special")) {
            ids_special = golden_ids(c["ids_special"]);
        } else {
            if (v.add_bos) ids_special.push_back(v.bos_id);
            ids_special.insert(ids_special.end(), ids.begin(), ids.end());
            if (v.add_eos) ids_special.push_back(v.eos_id);
        }
        expect_ids("encode", text, ids, tok.encode(text, false, false));
        expect_ids("encode(add_bos, parse_special)", text, ids_special, tok.encode(text, true, true));
        expect_text("decode", text, c.contains("decode") ? golden_bytes(c["decode"]) : text, tok.decode(ids));
        expect_text("decode(render_special)", text,
                    c.contains("decode_special") ? golden_bytes(c["decode_special"]) : text,
                    tok.decode(ids_special, true));
    }
    for (const QJsonValue& value : golden["pieces"].toArray()) {
        const QJsonArray p = value.toArray();
        const TokenId id = p[0].toInt();
        const std::string label = "token " + std::to_string(id);
        expect_text("piece", label, QByteArray::fromHex(p[1].toString().toLatin1()).toStdString(),
                    tok.token_to_piece(id, false));
        expect_text("special piece", label, QByteArray::fromHex(p[2].toString().toLatin1()).toStdString(),
                    tok.token_to_piece(id, true));
    }
    if (mismatches == 0) return {};
    return first + " (" + std::to_string(mismatches) + " mismatches in all)";
}

// Byte-level alphabet tokens plus `extra`, for hand-built BPE vocabs.
TokenizerVocab small_bpe_vocab(std::vector<std::string> extra, std::vector<std::string> merges) {
    TokenizerVocab v;
    v.model = "gpt2";
    v.pre = "gpt-2";
    for (int c = 0x21; c <= 0x7E; ++c) v.tokens.push_back(std::string(1, static_cast<char>(c)));
    v.tokens.push_back("\xC4\xA0");  // "Ġ", the stand-in for a space
    for (std::string& t : extra) v.tokens.push_back(std::move(t));
    v.merges = std::move(merges);
    return v;
}

}  // namespace

class TestTokenizer : public QObject {
    Q_OBJECT

    std::optional<TokenizerVocab> model_vocab_;  // the default model's, when present

    const TokenizerVocab& model_vocab() const { return *model_vocab_; }

    std::unique_ptr<Tokenizer> make(TokenizerVocab vocab) {
        auto r = Tokenizer::create(std::move(vocab));
        if (!r.ok()) qWarning("Tokenizer::create: %s", r.status().message().c_str());
        return r.ok() ? std::move(r).value() : nullptr;
    }

private slots:
    void initTestCase() {
        if (!QFile::exists(WB_DEFAULT_MODEL_PATH)) return;
        auto r = load_vocab(WB_DEFAULT_MODEL_PATH);
        QVERIFY2(r.ok(), r.status().message().c_str());
        model_vocab_ = std::move(r).value();
    }

    void bpe_matches_llama_cpp_data() {
        QTest::addColumn<QString>("pre");
        for (const char* pre : {"smollm", "llama-bpe", "qwen2", "default", "gpt-2"}) QTest::newRow(pre) << pre;
    }
    void bpe_matches_llama_cpp() {
        QFETCH(QString, pre);
        if (!model_vocab_) WB_SKIP_MISSING(kNoModel);
        const QJsonObject golden = read_golden(pre);
        QVERIFY2(!golden.isEmpty(), "golden file missing or unreadable");
        QVERIFY(golden["cases"].toArray().size() >= 300);
        TokenizerVocab vocab = model_vocab();
        vocab.pre = pre.toStdString();
        // The golden vocab copies carry a few digit merges the model lacks (see the generator).
        for (const QJsonValue& t : golden["extra_tokens"].toArray()) {
            vocab.tokens.push_back(t.toString().toStdString());
            vocab.token_types.push_back(static_cast<int32_t>(TokenType::normal));
        }
        for (const QJsonValue& m : golden["extra_merges"].toArray()) vocab.merges.push_back(m.toString().toStdString());
        auto tok = make(std::move(vocab));
        QVERIFY(tok);
        const std::string mismatch = check_against_golden(*tok, golden);
        QVERIFY2(mismatch.empty(), mismatch.c_str());
    }

    void spm_matches_llama_cpp() {
        QVERIFY2(QFile::exists(QString::fromStdString(kSpmVocabPath)), kNoSpmVocab);
        auto vocab = load_vocab(kSpmVocabPath);
        QVERIFY2(vocab.ok(), vocab.status().message().c_str());
        auto tok = make(std::move(vocab).value());
        QVERIFY(tok);
        const std::string mismatch = check_against_golden(*tok, read_golden("spm"));
        QVERIFY2(mismatch.empty(), mismatch.c_str());
    }

    // Gemma 3's own 262k-piece SentencePiece vocab (add_bos, no space prefix, byte fallback) on
    // the same few hundred strings.
    void gemma3_spm_matches_llama_cpp() {
        const std::string path = wbtest::find_model("gemma-3-270m-q4_k_m.gguf");
        if (path.empty()) WB_SKIP_MISSING("gemma-3-270m-q4_k_m.gguf not present: WB_EXTRA_MODELS=gemma3 installer/bootstrap.sh");
        auto vocab = load_vocab(path);
        QVERIFY2(vocab.ok(), vocab.status().message().c_str());
        QCOMPARE(vocab->tokens.size(), size_t{262144});
        auto tok = make(std::move(vocab).value());
        QVERIFY(tok);
        const QJsonObject golden = read_golden("gemma3");
        QVERIFY(golden["cases"].toArray().size() >= 300);
        const std::string mismatch = check_against_golden(*tok, golden);
        QVERIFY2(mismatch.empty(), mismatch.c_str());
    }

    void spm_loader_applies_llama_cpp_defaults() {
        // The tiny vocab has no special ids or add_* keys: llama.cpp's SentencePiece defaults apply.
        QVERIFY2(QFile::exists(QString::fromStdString(kSpmVocabPath)), kNoSpmVocab);
        auto vocab = load_vocab(kSpmVocabPath);
        QVERIFY2(vocab.ok(), vocab.status().message().c_str());
        QCOMPARE(vocab->model, std::string("llama"));
        QCOMPARE(vocab->unk_id, 0);
        QCOMPARE(vocab->bos_id, 1);
        QCOMPARE(vocab->eos_id, 2);
        QVERIFY(vocab->add_bos);
        QVERIFY(!vocab->add_eos);
        QVERIFY(vocab->add_space_prefix);
        auto tok = make(std::move(vocab).value());
        QVERIFY(tok);
        QVERIFY(tok->is_eog(2));
        QVERIFY(tok->is_control(1));
        // Bytes no piece covers fall back to <0xXX> tokens and decode back to the same bytes.
        const std::string cjk = "\xE6\xBC\xA2\xE5\xAD\x97";  // 漢字
        const auto ids = tok->encode(cjk, false, false);
        QCOMPARE(tok->decode(ids), cjk);
    }

    void plain_text_round_trips() {
        if (!model_vocab_) WB_SKIP_MISSING(kNoModel);
        auto tok = make(model_vocab());
        QVERIFY(tok);
        const QJsonObject golden = read_golden("smollm");
        int checked = 0;
        for (const QJsonValue& value : golden["cases"].toArray()) {
            const QJsonObject c = value.toObject();
            if (c["text"].isObject()) continue;  // not UTF-8: repaired to U+FFFD, cannot round-trip
            const std::string text = golden_bytes(c["text"]);
            const std::string back = tok->decode(tok->encode(text, false, false));
            const std::string why = "round trip of \"" + printable(text) + "\" gave \"" + printable(back) + "\"";
            QVERIFY2(back == text, why.c_str());
            ++checked;
        }
        QVERIFY(checked >= 300);
    }

    void special_token_parsing_on_and_off() {
        if (!model_vocab_) WB_SKIP_MISSING(kNoModel);
        auto tok = make(model_vocab());
        QVERIFY(tok);
        const TokenId im_start = tok->find_token("<|im_start|>");
        const TokenId im_end = tok->find_token("<|im_end|>");
        QVERIFY(im_start >= 0 && im_end >= 0);
        const std::string prompt = "<|im_start|>user\nHi<|im_end|>";
        const auto parsed = tok->encode(prompt, false, true);
        QCOMPARE(parsed.front(), im_start);
        QCOMPARE(parsed.back(), im_end);
        const auto plain = tok->encode(prompt, false, false);
        QVERIFY(std::find(plain.begin(), plain.end(), im_start) == plain.end());
        QVERIFY(std::find(plain.begin(), plain.end(), im_end) == plain.end());
        QCOMPARE(tok->decode(plain), prompt);
        // Control tokens render only on request.
        QCOMPARE(tok->decode(parsed), std::string("user\nHi"));
        QCOMPARE(tok->decode(parsed, true), prompt);
        QVERIFY(tok->is_eog(im_end));
        QVERIFY(tok->is_control(im_start));
        QVERIFY(!tok->is_eog(im_start));
        QCOMPARE(tok->vocab().eot_id, im_end);  // detected by text: the file names no EOT
    }

    void code_points_past_unicode_read_as_replacement() {
        if (!model_vocab_) WB_SKIP_MISSING(kNoModel);
        auto tok = make(model_vocab());
        QVERIFY(tok);
        // Lenient decoding turns these into values past U+10FFFF; llama.cpp aborts on them, we read
        // U+FFFD like any other malformed byte sequence.
        const std::string fffd = "\xEF\xBF\xBD";
        QCOMPARE(tok->encode("\xF5\x80\x80\x80", false, false), tok->encode(fffd, false, false));
        QCOMPARE(tok->encode("a\xF7\xBF\xBF\xBF" "b", false, false), tok->encode("a" + fffd + "b", false, false));
        QCOMPARE(tok->decode(tok->encode("\xF4\x90\x80\x80!", false, false)), fffd + "!");
    }

    void stream_decoder_never_splits_characters() {
        if (!model_vocab_) WB_SKIP_MISSING(kNoModel);
        auto tok = make(model_vocab());
        QVERIFY(tok);
        const std::vector<std::string> texts = {
            "你好，世界！我爱编程。", "👨‍👩‍👧‍👦 family", "🏳️‍🌈🇫🇷🇯🇵", "こんにちは世界", "I ❤️ 🍕! ✨🚀", "नमस्ते दुनिया",
            "Привет 😀😃😄😁 мир", "ﬁ ½ ∞ €"};
        for (const std::string& text : texts) {
            Utf8StreamDecoder stream;
            std::string shown;
            int partial_pieces = 0;
            for (TokenId id : tok->encode(text, false, false)) {
                const std::string piece = tok->token_to_piece(id, false);
                if (!whole_utf8(piece)) ++partial_pieces;
                const std::string out = stream.push(piece);
                QVERIFY2(whole_utf8(out), ("partial UTF-8 emitted for \"" + printable(text) + "\"").c_str());
                shown += out;
            }
            shown += stream.flush();
            QCOMPARE(shown, text);
            if (text.rfind("👨", 0) == 0) QVERIFY(partial_pieces > 0);  // the test does exercise splitting
        }
    }

    void stream_decoder_bytes() {
        Utf8StreamDecoder s;
        QCOMPARE(s.push("a\xE4"), std::string("a"));
        QCOMPARE(s.push("\xBD"), std::string());
        QCOMPARE(s.push("\xA0!"), std::string("\xE4\xBD\xA0!"));
        QCOMPARE(s.push("\xF0\x9F\x98"), std::string());
        QCOMPARE(s.push("\x80"), std::string("\xF0\x9F\x98\x80"));
        // Bytes that can never complete are passed through rather than held forever.
        QCOMPARE(s.push("\xFF"), std::string("\xFF"));
        QCOMPARE(s.push("\x80\x80"), std::string("\x80\x80"));
        QCOMPARE(s.push("x\xC3"), std::string("x"));
        QCOMPARE(s.flush(), std::string("\xC3"));
        QCOMPARE(s.flush(), std::string());
    }

    void small_bpe_merges_by_rank() {
        TokenizerVocab v = small_bpe_vocab({"ab", "bc", "abc"}, {"b c", "a b", "ab c"});
        auto tok = make(v);
        QVERIFY(tok);
        // "b c" outranks "a b", so "abc" is a + bc (no "a bc" merge) rather than ab + c -> abc.
        QCOMPARE(tok->encode("abc", false, false), (std::vector<TokenId>{tok->find_token("a"), tok->find_token("bc")}));
        QCOMPARE(tok->encode("abx", false, false), (std::vector<TokenId>{tok->find_token("ab"), tok->find_token("x")}));
        QCOMPARE(tok->decode(tok->encode("ab abc", false, false)), std::string("ab abc"));
    }

    void invalid_vocabs_are_errors() {
        const auto code_of = [](TokenizerVocab v) { return Tokenizer::create(std::move(v)).status().code(); };
        const auto message_of = [](TokenizerVocab v) { return Tokenizer::create(std::move(v)).status().message(); };
        const TokenizerVocab good = small_bpe_vocab({"ab"}, {"a b"});
        QCOMPARE(code_of(good), StatusCode::ok);

        TokenizerVocab bad_merge = good;
        bad_merge.merges = {"a b", "ab"};
        QCOMPARE(code_of(bad_merge), StatusCode::invalid_file);
        QVERIFY(message_of(bad_merge).find("tokenizer.ggml.merges[1]") != std::string::npos);
        bad_merge.merges = {"a "};
        QCOMPARE(code_of(bad_merge), StatusCode::invalid_file);

        TokenizerVocab bad_id = good;
        bad_id.eos_id = 5000;
        QCOMPARE(code_of(bad_id), StatusCode::invalid_file);
        QVERIFY(message_of(bad_id).find("5000") != std::string::npos);
        bad_id.eos_id = -7;
        QCOMPARE(code_of(bad_id), StatusCode::invalid_file);

        TokenizerVocab no_bos = good;
        no_bos.add_bos = true;
        QCOMPARE(code_of(no_bos), StatusCode::invalid_file);

        TokenizerVocab short_scores = good;
        short_scores.scores = {0.5f};
        QCOMPARE(code_of(short_scores), StatusCode::invalid_file);

        TokenizerVocab empty = good;
        empty.tokens.clear();
        QCOMPARE(code_of(empty), StatusCode::invalid_file);

        TokenizerVocab bad_pre = good;
        bad_pre.pre = "klingon";
        QCOMPARE(code_of(bad_pre), StatusCode::unsupported);
        QVERIFY(message_of(bad_pre).find("klingon") != std::string::npos);

        TokenizerVocab bad_model = good;
        bad_model.model = "bert";
        QCOMPARE(code_of(bad_model), StatusCode::unsupported);
    }

    void loader_errors_name_the_key() {
        const auto base = [] {
            GgufWriter w;
            w.set_string("general.architecture", "llama");
            w.set_string("tokenizer.ggml.model", "gpt2");
            w.set_string("tokenizer.ggml.pre", "llama-bpe");
            w.set_string_array("tokenizer.ggml.tokens", {"a", "b", "ab", "<|begin_of_text|>"});
            w.set_string_array("tokenizer.ggml.merges", {"a b"});
            return w;
        };
        {
            GgufWriter w = base();
            w.set_uint32("tokenizer.ggml.bos_token_id", 3);
            auto v = load_vocab_from(w);
            QVERIFY2(v.ok(), v.status().message().c_str());
            QVERIFY(v->add_bos);  // llama-bpe adds BOS when the file does not say
            QCOMPARE(v->bos_id, 3);
            QCOMPARE(v->eos_id, -1);  // llama.cpp's default (11) is past this tiny vocab
            QVERIFY(!v->add_space_prefix);
        }
        {
            GgufWriter w = base();
            w.set_uint32("tokenizer.ggml.bos_token_id", 70000);
            auto v = load_vocab_from(w);
            QCOMPARE(v.status().code(), StatusCode::invalid_file);
            QVERIFY2(v.status().message().find("tokenizer.ggml.bos_token_id") != std::string::npos &&
                         v.status().message().find("70000") != std::string::npos,
                     v.status().message().c_str());
        }
        {
            GgufWriter w;
            w.set_string("tokenizer.ggml.model", "gpt2");
            w.set_string_array("tokenizer.ggml.tokens", {"a"});
            auto v = load_vocab_from(w);
            QCOMPARE(v.status().code(), StatusCode::not_found);
            QVERIFY(v.status().message().find("tokenizer.ggml.merges") != std::string::npos);
        }
        {
            GgufWriter w = base();
            w.set_float32_array("tokenizer.ggml.scores", {1.0f});
            QCOMPARE(load_vocab_from(w).status().code(), StatusCode::invalid_file);
        }
        {
            GgufWriter w = base();
            w.set_string("tokenizer.ggml.model", "t5");
            QCOMPARE(load_vocab_from(w).status().code(), StatusCode::unsupported);
        }
    }

    void gpt2_alias_matches_gpt_2() {
        if (!model_vocab_) WB_SKIP_MISSING(kNoModel);
        TokenizerVocab a = model_vocab();
        a.pre = "gpt2";
        TokenizerVocab b = model_vocab();
        b.pre = "gpt-2";
        auto ta = make(std::move(a));
        auto tb = make(std::move(b));
        QVERIFY(ta && tb);
        const std::string text = "It's 2024: naïve café, 12345 tokens!\n\n  done ";
        QCOMPARE(ta->encode(text, true, true), tb->encode(text, true, true));
    }
};

QTEST_APPLESS_MAIN(TestTokenizer)
#include "test_tokenizer.moc"
