// The long-context tasks' prompts, generated from seeds. A prompt is built from separately
// tokenized pieces (header, filler sentences or list entries, the facts, the question) so its
// length is exact to the token. The needle kinds hide facts between filler sentences (the
// passkey test of Mohtashami & Jaggi 2023); one trial's numbers, keys and the other facts'
// positions are the same at every length and depth, so prompts of a trial differ only by where
// the asked fact sits and share their filler up to it (the conversation path reuses that
// prefix). Word extraction fills the whole context with coined three-syllable words (no word
// list to ship, and no word is a substring of another), counted as RULER counts them: ten
// common words against many rare ones, or Zipf-distributed frequencies (alpha 2).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <random>
#include <set>

#include "workbench/retrieval.h"

namespace workbench {
namespace {

constexpr const char* kNeedleHeader =
    "There is an important piece of information hidden inside a lot of irrelevant text. Find it and memorize it. "
    "I will quiz you about it.\n";
constexpr const char* kTrackingHeader =
    "Memorize and track the chain of variable assignments hidden in the following text. I will quiz you about it.\n";
constexpr const char* kListHeader =
    "Below is a numbered list of words. Some words appear more often than others: remember the ones that appear most often.\n";
constexpr const char* kCodedHeader = "Read the following coded text and track how often each coded word appears.\n";
constexpr const char* kFiller[] = {" The grass is green.", " The sky is blue.", " The sun is yellow.", " Here we go.",
                                   " There and back again."};
constexpr const char* kKeys[] = {"apple", "river", "candle", "falcon", "marble", "violet",
                                 "copper", "meadow", "harbor", "lantern", "pepper", "glacier"};
constexpr int kMultiKeyPairs = 4;     // multi-key: the asked pair and three others
constexpr int kValues = 4;            // multi-value: values of the one key; multi-query: keys asked
constexpr int kChainLength = 5;       // variable tracking: the value's variable and four hops
constexpr size_t kCommonWords = 10;   // common-word extraction: words asked
constexpr size_t kFrequentWords = 3;  // frequent-word extraction: words asked

struct KindTraits {
    RetrievalKind kind;
    const char* name;
    bool has_depth;
    int32_t answer_tokens;
};
constexpr KindTraits kKinds[] = {
    {RetrievalKind::passkey, "passkey", true, 8},
    {RetrievalKind::multi_key, "multi_key", true, 8},
    {RetrievalKind::multi_value, "multi_value", true, 32},
    {RetrievalKind::multi_query, "multi_query", true, 32},
    {RetrievalKind::variable_tracking, "variable_tracking", true, 40},
    {RetrievalKind::common_words, "common_words", false, 64},
    {RetrievalKind::frequent_words, "frequent_words", false, 24},
};

const KindTraits& traits(RetrievalKind kind) { return kKinds[static_cast<size_t>(kind)]; }

std::vector<TokenId> tokens_of(const Engine& engine, const std::string& text) { return engine.tokenize(text, false, false); }

// One trial's generator: the same stream at every length and depth (passkey and multi-key draw
// as they did before the other kinds existed, so their prompts are unchanged).
std::mt19937_64 trial_rng(RetrievalKind kind, int32_t trial, uint64_t seed) {
    return std::mt19937_64(seed * 1000003u + static_cast<uint64_t>(trial) * 7919u + 17u * static_cast<uint64_t>(kind));
}

std::string five_digits(std::mt19937_64& rng) { return std::to_string(10000 + rng() % 90000); }

// `n` different five-digit numbers (every one must be found, so none may stand for another).
std::vector<std::string> distinct_numbers(std::mt19937_64& rng, int n) {
    std::vector<std::string> out;
    while (out.size() < static_cast<size_t>(n))
        if (std::string v = five_digits(rng); std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    return out;
}
double fraction(std::mt19937_64& rng) { return static_cast<double>(rng() % 1000) / 1000.0; }

template <class T>
void shuffle(std::vector<T>& v, std::mt19937_64& rng) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng() % i]);
}

std::vector<std::string> distinct_keys(std::mt19937_64& rng) {
    std::vector<std::string> keys(std::begin(kKeys), std::end(kKeys));
    shuffle(keys, rng);
    return keys;
}

// `count` distinct coined words of three consonant-vowel syllables.
std::vector<std::string> coined_words(std::mt19937_64& rng, size_t count) {
    static constexpr char kConsonants[] = "bdfgklmnprstvz", kVowels[] = "aeiou";
    std::set<std::string> seen;
    std::vector<std::string> out;
    while (out.size() < count) {
        std::string w;
        for (int s = 0; s < 3; ++s) w += {kConsonants[rng() % 14], kVowels[rng() % 5]};
        if (seen.insert(w).second) out.push_back(w);
    }
    return out;
}

// A fact and where it goes, as a fraction of the filler.
struct Placed {
    std::string text;
    double at;
};

// Header, filler sentences in their fixed cycle as many as fit, the facts between sentences
// (in list order where two fall together), the question. `fits` false: header, facts and
// question alone are longer than `length`.
std::vector<TokenId> haystack(const Engine& engine, const char* header, const std::vector<Placed>& facts, const std::string& question,
                              int32_t length, bool& fits, int32_t& question_at) {
    std::vector<TokenId> out = engine.tokenize(header, true, false);
    const std::vector<TokenId> tail = tokens_of(engine, question);
    std::vector<std::vector<TokenId>> fact_tokens;
    size_t total = out.size() + tail.size();
    for (const Placed& f : facts) {
        fact_tokens.push_back(tokens_of(engine, f.text));
        total += fact_tokens.back().size();
    }
    fits = total <= static_cast<size_t>(std::max(0, length));
    std::vector<std::vector<TokenId>> filler;
    for (size_t i = 0;; ++i) {
        std::vector<TokenId> s = tokens_of(engine, kFiller[i % std::size(kFiller)]);
        if (total + s.size() > static_cast<size_t>(std::max(0, length))) break;
        total += s.size();
        filler.push_back(std::move(s));
    }
    const size_t n = filler.size();
    std::vector<std::vector<size_t>> before(n + 1);   // sentence index → the facts just before it
    for (size_t i = 0; i < facts.size(); ++i)
        before[std::min(n, static_cast<size_t>(std::clamp(facts[i].at, 0.0, 1.0) * static_cast<double>(n) + 0.5))].push_back(i);
    for (size_t i = 0; i <= n; ++i) {
        for (size_t f : before[i]) out.insert(out.end(), fact_tokens[f].begin(), fact_tokens[f].end());
        if (i < n) out.insert(out.end(), filler[i].begin(), filler[i].end());
    }
    question_at = static_cast<int32_t>(out.size());
    out.insert(out.end(), tail.begin(), tail.end());
    return out;
}

std::string listed(const std::vector<std::string>& items) {
    std::string s;
    for (size_t i = 0; i < items.size(); ++i) s += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
    return s;
}

RetrievalPrompt needle_prompt(const Engine& engine, RetrievalKind kind, int32_t length, double depth, std::mt19937_64& rng) {
    RetrievalPrompt p;
    std::vector<Placed> facts;
    std::string question;
    const char* header = kNeedleHeader;
    auto value_of = [](const std::string& key, const std::string& value) { return " The value of key " + key + " is " + value + "."; };
    switch (kind) {
    case RetrievalKind::passkey: {
        const std::string v = five_digits(rng);
        facts.push_back({" The pass key is " + v + ". Remember it. " + v + " is the pass key.", depth});
        question = "\nWhat is the pass key? The pass key is";
        p.answers = {v};
        break;
    }
    case RetrievalKind::multi_key: {
        const std::string v = five_digits(rng);
        const std::vector<std::string> keys = distinct_keys(rng);
        for (int i = 1; i < kMultiKeyPairs; ++i) {
            const std::string other = five_digits(rng);
            facts.push_back({value_of(keys[static_cast<size_t>(i)], other), fraction(rng)});
            if (i == 1) p.follow_up_answers = {other};
        }
        facts.push_back({value_of(keys[0], v), depth});
        question = "\nWhat is the value of key " + keys[0] + "? The value of key " + keys[0] + " is";
        p.follow_up = tokens_of(engine, "\nWhat is the value of key " + keys[1] + "? The value of key " + keys[1] + " is");
        p.answers = {v};
        break;
    }
    case RetrievalKind::multi_value: {
        const std::string key = distinct_keys(rng)[0];
        p.answers = distinct_numbers(rng, kValues);
        for (int i = 1; i < kValues; ++i) facts.push_back({" One of the values of key " + key + " is " + p.answers[static_cast<size_t>(i)] + ".", fraction(rng)});
        facts.push_back({" One of the values of key " + key + " is " + p.answers[0] + ".", depth});
        question = "\nWhat are all the values of key " + key + "? The values of key " + key + " are";
        break;
    }
    case RetrievalKind::multi_query: {
        std::vector<std::string> keys = distinct_keys(rng);
        keys.resize(kValues);
        p.answers = distinct_numbers(rng, kValues);
        for (int i = 1; i < kValues; ++i) facts.push_back({value_of(keys[static_cast<size_t>(i)], p.answers[static_cast<size_t>(i)]), fraction(rng)});
        facts.push_back({value_of(keys[0], p.answers[0]), depth});
        question = "\nWhat are the values of keys " + listed(keys) + "? The values of keys " + listed(keys) + " are";
        break;
    }
    case RetrievalKind::variable_tracking: {
        // The chain starts at the depth; its hops follow at even steps towards the question.
        header = kTrackingHeader;
        const std::string v = five_digits(rng);
        std::set<std::string> seen;
        while (p.answers.size() < static_cast<size_t>(kChainLength)) {
            std::string name;
            for (int c = 0; c < 5; ++c) name += static_cast<char>('A' + rng() % 26);
            if (seen.insert(name).second) p.answers.push_back(name);
        }
        for (int i = 0; i < kChainLength; ++i) {
            const std::string& name = p.answers[static_cast<size_t>(i)];
            facts.push_back({" VAR " + name + " = " + (i == 0 ? v : "VAR " + p.answers[static_cast<size_t>(i - 1)]) + ".",
                             depth + (1.0 - depth) * i / kChainLength});
        }
        question = "\nQuestion: Find every variable that is assigned the value " + v +
                   ", directly or through other variables. Answer: The variables assigned the value " + v + " are";
        break;
    }
    default:
        break;
    }
    p.tokens = haystack(engine, header, facts, question, length, p.fits, p.question_at);
    return p;
}

RetrievalPrompt common_words_prompt(const Engine& engine, int32_t length, std::mt19937_64& rng) {
    const std::vector<TokenId> head = engine.tokenize(kListHeader, true, false);
    const std::string q = std::to_string(kCommonWords);
    const std::vector<TokenId> tail = tokens_of(engine, "\nQuestion: What are the " + q + " most common words in the list above? Answer: The " + q +
                                                            " most common words in the list are:");
    const int64_t budget = static_cast<int64_t>(length) - static_cast<int64_t>(head.size() + tail.size());
    // Common words fill at most half the list: 30 occurrences against 3 (RULER's) once the list
    // is long enough, fewer against 1 in short prompts. More rare words are drawn than fit.
    const int64_t entries_guess = std::max<int64_t>(budget / 5, 2 * static_cast<int64_t>(kCommonWords));
    const int common = static_cast<int>(std::clamp<int64_t>(entries_guess / (2 * static_cast<int64_t>(kCommonWords)), 2, 30));
    const int rare = common >= 10 ? 3 : 1;
    const size_t n_rare = static_cast<size_t>(std::max<int64_t>(0, (entries_guess - static_cast<int64_t>(kCommonWords) * common) / rare)) * 2 + 8;
    const std::vector<std::string> words = coined_words(rng, kCommonWords + n_rare);
    std::vector<size_t> order;   // word index per entry
    for (size_t w = 0; w < words.size(); ++w) order.insert(order.end(), static_cast<size_t>(w < kCommonWords ? common : rare), w);
    shuffle(order, rng);
    std::vector<std::vector<TokenId>> word_piece(words.size()), number_piece(order.size());
    for (size_t w = 0; w < words.size(); ++w) word_piece[w] = tokens_of(engine, " " + words[w]);
    for (size_t i = 0; i < order.size(); ++i) {
        std::string number = " ";   // appended, not " " + to_string(): GCC 12 warns falsely (-Wrestrict) on the latter
        number += std::to_string(i + 1);
        number += '.';
        number_piece[i] = tokens_of(engine, number);
    }
    // The most rare words (the first `keep` drawn, every occurrence) whose numbered list fits.
    auto list_tokens = [&](size_t keep) {
        int64_t total = 0;
        size_t number = 0;
        for (size_t w : order)
            if (w < kCommonWords + keep) total += static_cast<int64_t>(number_piece[number++].size() + word_piece[w].size());
        return total;
    };
    size_t keep = 0;
    for (size_t hi = n_rare; keep < hi;) {
        const size_t mid = (keep + hi + 1) / 2;
        if (list_tokens(mid) <= budget) keep = mid;
        else hi = mid - 1;
    }
    RetrievalPrompt p;
    p.tokens = head;
    size_t number = 0;
    for (size_t w : order) {
        if (w >= kCommonWords + keep) continue;
        const size_t n = number_piece[number].size() + word_piece[w].size();
        if (p.tokens.size() + n + tail.size() > static_cast<size_t>(std::max(0, length))) {   // too short for the common words
            p.fits = false;
            break;
        }
        p.tokens.insert(p.tokens.end(), number_piece[number].begin(), number_piece[number].end());
        p.tokens.insert(p.tokens.end(), word_piece[w].begin(), word_piece[w].end());
        ++number;
    }
    p.question_at = static_cast<int32_t>(p.tokens.size());
    p.tokens.insert(p.tokens.end(), tail.begin(), tail.end());
    p.answers.assign(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(kCommonWords));
    return p;
}

RetrievalPrompt frequent_words_prompt(const Engine& engine, int32_t length, std::mt19937_64& rng) {
    const std::vector<TokenId> head = engine.tokenize(kCodedHeader, true, false);
    const std::vector<TokenId> tail = tokens_of(engine, "\nQuestion: What are the three most frequent coded words in the text above? "
                                                        "Answer: The three most frequent coded words are:");
    const int64_t budget = static_cast<int64_t>(length) - static_cast<int64_t>(head.size() + tail.size());
    constexpr size_t kVocabulary = 64;   // ranks past ~1/sqrt(E) occur once or not at all
    const std::vector<std::string> words = coined_words(rng, kVocabulary);
    std::vector<std::vector<TokenId>> pieces;
    for (const std::string& w : words) pieces.push_back(tokens_of(engine, " " + w));
    double harmonic = 0;
    for (size_t r = 1; r <= kVocabulary; ++r) harmonic += 1.0 / static_cast<double>(r * r);
    // Counts proportional to rank^-2 for E entries, E scaled until the words fill the budget; the
    // most frequent word takes up what rounding leaves (it stays far ahead of the second).
    std::vector<int64_t> counts(kVocabulary);
    double entries = static_cast<double>(std::max<int64_t>(budget, 1)) / 2.5;
    int64_t total = 0;
    for (int round = 0; round < 4; ++round) {
        total = 0;
        for (size_t r = 0; r < kVocabulary; ++r) {
            counts[r] = std::lround(entries / (harmonic * static_cast<double>((r + 1) * (r + 1))));
            total += counts[r] * static_cast<int64_t>(pieces[r].size());
        }
        if (total > 0) entries *= static_cast<double>(budget) / static_cast<double>(total);
    }
    const auto first = static_cast<int64_t>(pieces[0].size());
    const int64_t slack = budget - total;
    counts[0] = std::max<int64_t>(0, counts[0] + (slack >= 0 ? slack / first : -((-slack + first - 1) / first)));
    // The answers stay strictly ahead of the next rank however short the text (where they do
    // not fit, the prompt says so).
    for (size_t r = kFrequentWords; r-- > 0;) counts[r] = std::max(counts[r], counts[r + 1] + 1);
    std::vector<size_t> order;
    for (size_t r = 0; r < kVocabulary; ++r) order.insert(order.end(), static_cast<size_t>(counts[r]), r);
    shuffle(order, rng);
    RetrievalPrompt p;
    p.tokens = head;
    for (size_t r : order) {
        if (static_cast<int64_t>(p.tokens.size() + pieces[r].size() + tail.size()) > length) {
            p.fits = false;
            break;
        }
        p.tokens.insert(p.tokens.end(), pieces[r].begin(), pieces[r].end());
    }
    p.question_at = static_cast<int32_t>(p.tokens.size());
    p.tokens.insert(p.tokens.end(), tail.begin(), tail.end());
    p.answers.assign(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(kFrequentWords));
    return p;
}

}  // namespace

const char* retrieval_kind_name(RetrievalKind kind) { return traits(kind).name; }
bool retrieval_kind_has_depth(RetrievalKind kind) { return traits(kind).has_depth; }
int32_t retrieval_answer_tokens(RetrievalKind kind) { return traits(kind).answer_tokens; }

int32_t retrieval_answer_tokens(const std::vector<RetrievalKind>& kinds) {
    int32_t most = 0;
    for (RetrievalKind k : kinds) most = std::max(most, retrieval_answer_tokens(k));
    return most;
}

const std::vector<RetrievalKind>& all_retrieval_kinds() {
    static const std::vector<RetrievalKind> all = [] {
        std::vector<RetrievalKind> v;
        for (const KindTraits& t : kKinds) v.push_back(t.kind);
        return v;
    }();
    return all;
}

Result<std::vector<RetrievalKind>> parse_retrieval_kinds(const std::string& text) {
    if (text == "all") return all_retrieval_kinds();
    std::vector<RetrievalKind> out;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = std::min(text.find(',', start), text.size());
        const std::string word = text.substr(start, comma - start);
        auto it = std::find_if(std::begin(kKinds), std::end(kKinds), [&](const KindTraits& t) { return word == t.name; });
        if (it == std::end(kKinds)) {
            std::string names;
            for (const KindTraits& t : kKinds) names += std::string(names.empty() ? "" : ", ") + t.name;
            return error(StatusCode::invalid_argument, "retrieval tasks: '" + word + "' is not one of " + names + " (or 'all')");
        }
        if (std::find(out.begin(), out.end(), it->kind) == out.end()) out.push_back(it->kind);
        start = comma + 1;
    }
    return out;
}

double answer_recall(const std::string& output, const std::vector<std::string>& answers) {
    if (answers.empty()) return 0.0;
    auto lower = [](std::string s) {
        std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return s;
    };
    const std::string text = lower(output);
    const auto found = std::count_if(answers.begin(), answers.end(), [&](const std::string& a) { return text.find(lower(a)) != std::string::npos; });
    return static_cast<double>(found) / static_cast<double>(answers.size());
}

RetrievalPrompt make_retrieval_prompt(const Engine& engine, RetrievalKind kind, int32_t length, int32_t depth_pct, int32_t trial,
                                      uint64_t seed) {
    std::mt19937_64 rng = trial_rng(kind, trial, seed);
    if (kind == RetrievalKind::common_words) return common_words_prompt(engine, length, rng);
    if (kind == RetrievalKind::frequent_words) return frequent_words_prompt(engine, length, rng);
    return needle_prompt(engine, kind, length, std::clamp(depth_pct, 0, 100) / 100.0, rng);
}

}  // namespace workbench
