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
constexpr PreTokenizerTraits kCleaned{.known = true, .clean_spaces = true};
constexpr PreTokenizerTraits kUncleaned{.known = true, .clean_spaces = false};
constexpr PreTokenizerTraits kLlama3{.known = true, .add_bos = true, .clean_spaces = true, .ignore_merges = true};
constexpr PreEntry kPreEntries[] = {
    {"default", PreKind::default_pre, kCleaned}, {"gpt-2", PreKind::gpt2, kCleaned},
    {"gpt2", PreKind::gpt2, kCleaned},           {"smollm", PreKind::smollm, kUncleaned},
    {"llama3", PreKind::llama3, kLlama3},        {"llama-v3", PreKind::llama3, kLlama3},
    {"llama-bpe", PreKind::llama3, kLlama3},     {"qwen2", PreKind::qwen2, kUncleaned},
    {"deepseek-r1-qwen", PreKind::qwen2, kUncleaned},
};

const PreEntry* find_pre(std::string_view pre) {
    if (pre.empty()) pre = "default";
    for (const PreEntry& entry : kPreEntries) {
        if (entry.name == pre) return &entry;
    }
    return nullptr;
}

// The regexes below are written as the tokenizers define them; two things need adjusting for
// PCRE2 to classify characters exactly as llama.cpp does:
// - PCRE2's \s (even with UCP) misses U+0085, which the Unicode White_Space property, and so
//   llama.cpp, counts as whitespace. \s and \S become this explicit White_Space class.
// - PCRE2 10.42 carries Unicode 14 tables, llama.cpp Unicode 15.1 data. The letters, numbers and
//   punctuation Unicode 15.0/15.1 added (Kawi, Nag Mundari, Cyrillic Extended-D, CJK Extensions H
//   and I, ...) are added to \p{L}, \p{N} and \p{P}; with Unicode 15 PCRE2 tables this is a
//   no-op. (Characters assigned after 15.1 classify by whatever tables PCRE2 has.)
constexpr std::string_view kWhiteSpace =
    "\\t\\n\\x0B\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";
constexpr std::string_view kLetters =
    "\\p{L}\\x{1123F}-\\x{11240}\\x{11F02}\\x{11F04}-\\x{11F10}\\x{11F12}-\\x{11F33}\\x{1342F}"
    "\\x{13441}-\\x{13446}\\x{1B132}\\x{1B155}\\x{1DF25}-\\x{1DF2A}\\x{1E030}-\\x{1E06D}\\x{1E4D0}-\\x{1E4EB}"
    "\\x{2B739}\\x{2EBF0}-\\x{2EE5D}\\x{31350}-\\x{323AF}";
constexpr std::string_view kNumbers = "\\p{N}\\x{11F50}-\\x{11F59}\\x{1D2C0}-\\x{1D2D3}\\x{1E4F0}-\\x{1E4F9}";
constexpr std::string_view kPunctuation = "\\p{P}\\x{11B00}-\\x{11B09}\\x{11F43}-\\x{11F4F}";

// Rewrites \s, \S, \p{L}, \p{N} and \p{P} as the classes above, merged into an enclosing
// class when there is one (our patterns only negate whole classes, never single escapes inside).
std::string expand_classes(std::string_view pattern) {
    std::string out;
    bool in_class = false;
    const auto put_class = [&](std::string_view members, bool negated) {
        if (in_class) {
            out += members;
            return;
        }
        out += negated ? "[^" : "[";
        out += members;
        out += ']';
    };
    for (size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c != '\\' || i + 1 == pattern.size()) {
            if (c == '[') in_class = true;
            if (c == ']') in_class = false;
            out += c;
            continue;
        }
        const std::string_view rest = pattern.substr(i + 1);
        if (rest[0] == 's' || rest[0] == 'S') {
            put_class(kWhiteSpace, rest[0] == 'S');
            i += 1;
        } else if (rest.starts_with("p{L}") || rest.starts_with("p{N}") || rest.starts_with("p{P}")) {
            put_class(rest[2] == 'L' ? kLetters : rest[2] == 'N' ? kNumbers : kPunctuation, false);
            i += 4;
        } else {
            out += c;
            out += rest[0];
            i += 1;
        }
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

// Half-open byte range of the text being split.
struct Chunk {
    size_t begin = 0;
    size_t end = 0;
};

// Splits each chunk in `in` into the matches of `code` and the gaps between them, appending both,
// in order, to `out`. A chunk is matched as a subject of its own, so look-arounds end at its edges.
void split_chunks(const pcre2_code* code, const std::string& subject, const std::vector<Chunk>& in,
                  std::vector<Chunk>& out) {
    pcre2_match_data* match = pcre2_match_data_create_from_pattern(code, nullptr);
    for (const Chunk& chunk : in) {
        const auto* base = reinterpret_cast<PCRE2_SPTR>(subject.data() + chunk.begin);
        const size_t length = chunk.end - chunk.begin;
        size_t done = 0;   // bytes of the chunk already emitted
        size_t start = 0;  // where the next search begins
        while (start < length) {
            // A negative result is "no match" (or a resource limit): the rest becomes one gap.
            if (!match || pcre2_match(code, base, length, start, PCRE2_NO_UTF_CHECK, match, nullptr) < 0) break;
            const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
            const size_t m_begin = ovector[0];
            const size_t m_end = ovector[1];
            if (m_end == m_begin) {  // none of our patterns can match empty; never stall
                start = m_end + utf8_sequence_length(static_cast<unsigned char>(base[m_end]));
                continue;
            }
            if (m_begin > done) out.push_back({chunk.begin + done, chunk.begin + m_begin});
            out.push_back({chunk.begin + m_begin, chunk.begin + m_end});
            done = start = m_end;
        }
        if (done < length) out.push_back({chunk.begin + done, chunk.end});
    }
    pcre2_match_data_free(match);
}

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
        const std::string expanded = expand_classes(pattern);
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

    // llama.cpp splits the text re-encoded from its lenient decoding (bad bytes become U+FFFD).
    // PCRE2 needs valid UTF-8, so it matches a copy in which the code points that decoding can
    // yield but UTF-8 cannot carry (surrogates) read as U+FFFD: both are "other" characters to
    // every pattern here and take three bytes, so byte ranges agree between the two strings.
    std::string encoded;
    std::string subject;
    encoded.reserve(text.size() + 8);
    subject.reserve(text.size() + 8);
    for (uint32_t cp : decode_utf8_lenient(text)) {
        append_utf8(encoded, cp);
        append_utf8(subject, cp >= 0xD800 && cp <= 0xDFFF ? kReplacementChar : cp);
    }

    std::vector<Chunk> chunks{{0, subject.size()}};
    std::vector<Chunk> next;
    for (const auto& stage : stages_) {
        next.clear();
        split_chunks(stage->code, subject, chunks, next);
        chunks.swap(next);
    }
    words.reserve(chunks.size());
    for (const Chunk& chunk : chunks) {
        words.push_back(bytes_to_byte_level(std::string_view(encoded).substr(chunk.begin, chunk.end - chunk.begin)));
    }
    return words;
}

}  // namespace workbench
