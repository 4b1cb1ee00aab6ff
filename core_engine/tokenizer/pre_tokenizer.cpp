// Regex pre-tokenization with PCRE2. Each stage splits every chunk left by the previous stage into
// its matches and the gaps between them, exactly as llama.cpp's unicode_regex_split does; a stage
// sees only its chunk, so look-aheads stop at chunk ends like llama.cpp's own splitters.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/pre_tokenizer.h"

#include <pcre2.h>

#include <cstdint>

#include "tokenizer/unicode_text.h"

namespace workbench {

namespace {

enum class PreKind { default_pre, gpt2, smollm, llama3, qwen2 };

struct PreEntry {
    std::string_view name;
    PreKind kind;
    PreTokenizerTraits traits;
};

// The names llama.cpp maps to the pre-tokenizers we implement, with the flags it sets for them.
// "gpt2" is our alias: llama.cpp spells that family "gpt-2".
constexpr PreEntry kPreEntries[] = {
    {"default", PreKind::default_pre, {true, false, true, false}},
    {"gpt-2", PreKind::gpt2, {true, false, true, false}},
    {"gpt2", PreKind::gpt2, {true, false, true, false}},
    {"smollm", PreKind::smollm, {true, false, false, false}},
    {"llama3", PreKind::llama3, {true, true, true, true}},
    {"llama-v3", PreKind::llama3, {true, true, true, true}},
    {"llama-bpe", PreKind::llama3, {true, true, true, true}},
    {"qwen2", PreKind::qwen2, {true, false, false, false}},
    {"deepseek-r1-qwen", PreKind::qwen2, {true, false, false, false}},
};

const PreEntry* find_pre(std::string_view pre) {
    if (pre.empty()) pre = "default";
    for (const PreEntry& entry : kPreEntries) {
        if (entry.name == pre) return &entry;
    }
    return nullptr;
}

// The regexes below are written with \s and \S as in the tokenizers' own definitions. PCRE2's
// \s (even with UCP) misses U+0085, which the Unicode White_Space property, and so llama.cpp,
// counts as whitespace; we therefore expand \s and \S to this explicit White_Space class.
constexpr std::string_view kWhiteSpace =
    "\\t\\n\\x0B\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

std::string expand_whitespace(std::string_view pattern) {
    std::string out;
    bool in_class = false;
    for (size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '\\' && i + 1 < pattern.size()) {
            const char next = pattern[++i];
            if (next == 's' || next == 'S') {
                if (in_class) {
                    // Only the negated-class form [^\s...] occurs inside classes in our patterns.
                    out += kWhiteSpace;
                } else {
                    out += next == 's' ? "[" : "[^";
                    out += kWhiteSpace;
                    out += ']';
                }
            } else {
                out += c;
                out += next;
            }
            continue;
        }
        if (c == '[') in_class = true;
        if (c == ']') in_class = false;
        out += c;
    }
    return out;
}

// GPT-2's pattern. llama.cpp's hand-written splitter for it also takes a lone whitespace before
// a non-space as its own piece, which the trailing \s+ expresses.
constexpr std::string_view kGpt2Pattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
// Llama 3's pattern with the case-insensitive contractions spelled out, as llama.cpp adapts it.
constexpr std::string_view kLlama3Pattern =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// Qwen2 differs from Llama 3 only in taking digits one at a time.
constexpr std::string_view kQwen2Pattern =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

std::vector<std::string_view> stage_patterns(PreKind kind) {
    switch (kind) {
        case PreKind::gpt2: return {kGpt2Pattern};
        case PreKind::smollm: return {"\\p{N}", kGpt2Pattern};
        case PreKind::llama3: return {kLlama3Pattern};
        case PreKind::qwen2: return {kQwen2Pattern};
        case PreKind::default_pre:
            break;
    }
    return {"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2Pattern, "\\p{N}+", "[0-9][0-9][0-9]"};
}

// Half-open range of code point indices.
struct Chunk {
    size_t begin = 0;
    size_t end = 0;
};

}  // namespace

struct PreTokenizer::Stage {
    pcre2_code* code = nullptr;
    ~Stage() { pcre2_code_free(code); }
};

PreTokenizerTraits pre_tokenizer_traits(std::string_view pre) {
    const PreEntry* entry = find_pre(pre);
    return entry ? entry->traits : PreTokenizerTraits{};
}

Result<PreTokenizer> PreTokenizer::create(std::string_view pre) {
    const PreEntry* entry = find_pre(pre);
    if (!entry) {
        return error(StatusCode::unsupported,
                     "tokenizer.ggml.pre: unknown pre-tokenizer '" + std::string(pre) +
                         "' (supported: default, gpt-2, smollm, llama3, llama-bpe, qwen2)");
    }
    PreTokenizer result;
    result.traits_ = entry->traits;
    for (std::string_view pattern : stage_patterns(entry->kind)) {
        const std::string expanded = expand_whitespace(pattern);
        int error_code = 0;
        PCRE2_SIZE error_offset = 0;
        pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(expanded.data()), expanded.size(),
                                         PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
        if (!code) {
            PCRE2_UCHAR message[256];
            pcre2_get_error_message(error_code, message, sizeof(message));
            return error(StatusCode::internal, "pre-tokenizer regex '" + expanded + "' failed to compile at " +
                                                   std::to_string(error_offset) + ": " +
                                                   reinterpret_cast<const char*>(message));
        }
        // JIT is an optimisation only; the interpreter gives the same matches when it is absent.
        (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
        auto stage = std::make_shared<Stage>();
        stage->code = code;
        result.stages_.push_back(std::move(stage));
    }
    return result;
}

std::vector<std::string> PreTokenizer::split(std::string_view text) const {
    std::vector<std::string> words;
    if (text.empty()) return words;

    // PCRE2 needs valid UTF-8, so it matches a copy in which the code points lenient decoding can
    // produce but UTF-8 cannot carry (surrogates, values past U+10FFFF) read as U+FFFD; both are
    // "other" characters to every pattern here, so the split is unchanged.
    const std::vector<uint32_t> cps = decode_utf8_lenient(text);
    std::string subject;
    subject.reserve(text.size() + 8);
    std::vector<uint32_t> byte_offset(cps.size() + 1);  // code point index -> byte in subject
    std::vector<uint32_t> cp_index;                      // byte in subject -> code point index
    cp_index.reserve(text.size() + 1);
    for (size_t i = 0; i < cps.size(); ++i) {
        const bool encodable = cps[i] <= 0x10FFFF && (cps[i] < 0xD800 || cps[i] > 0xDFFF);
        byte_offset[i] = static_cast<uint32_t>(subject.size());
        append_utf8(subject, encodable ? cps[i] : kReplacementChar);
        cp_index.resize(subject.size(), static_cast<uint32_t>(i));
    }
    byte_offset[cps.size()] = static_cast<uint32_t>(subject.size());
    cp_index.push_back(static_cast<uint32_t>(cps.size()));

    std::vector<Chunk> chunks{{0, cps.size()}};
    std::vector<Chunk> next;
    pcre2_match_data* match = nullptr;
    for (const auto& stage : stages_) {
        match = pcre2_match_data_create_from_pattern(stage->code, nullptr);
        next.clear();
        for (const Chunk& chunk : chunks) {
            const auto* base = reinterpret_cast<PCRE2_SPTR>(subject.data() + byte_offset[chunk.begin]);
            const size_t length = byte_offset[chunk.end] - byte_offset[chunk.begin];
            const size_t origin = byte_offset[chunk.begin];
            size_t done = 0;   // bytes of the chunk already emitted
            size_t start = 0;  // where the next search begins
            while (start < length) {
                const int rc = pcre2_match(stage->code, base, length, start, PCRE2_NO_UTF_CHECK, match, nullptr);
                if (rc < 0) break;  // no match (or a match limit): the rest is one gap
                const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
                const size_t m_begin = ovector[0];
                const size_t m_end = ovector[1];
                if (m_end == m_begin) {  // none of our patterns can match empty; never stall
                    start = m_end + utf8_sequence_length(static_cast<unsigned char>(base[m_end]));
                    continue;
                }
                if (m_begin > done) next.push_back({cp_index[origin + done], cp_index[origin + m_begin]});
                next.push_back({cp_index[origin + m_begin], cp_index[origin + m_end]});
                done = start = m_end;
            }
            if (done < length) next.push_back({cp_index[origin + done], chunk.end});
        }
        pcre2_match_data_free(match);
        chunks.swap(next);
    }

    // Words carry the original code points (llama.cpp re-encodes them), then go byte-level.
    words.reserve(chunks.size());
    std::string utf8;
    for (const Chunk& chunk : chunks) {
        utf8.clear();
        for (size_t i = chunk.begin; i < chunk.end; ++i) append_utf8(utf8, cps[i]);
        words.push_back(bytes_to_byte_level(utf8));
    }
    return words;
}

}  // namespace workbench
