// The Prometheus text reader behind the Server page's live figures (see the header).
#include "ui/pages/server_metrics_text.h"

#include <QList>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace servermetrics {
namespace {

bool isNameStart(QChar c) { return (c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z') || c == u'_' || c == u':'; }
bool isNameChar(QChar c) { return isNameStart(c) || (c >= u'0' && c <= u'9'); }
bool isBlank(QChar c) { return c == u' ' || c == u'\t'; }

// The exposition format's spellings of the non-finite values, then an ordinary number.
std::optional<double> parseValue(QStringView text) {
    if (text == u"NaN") return std::numeric_limits<double>::quiet_NaN();
    if (text == u"+Inf" || text == u"Inf") return std::numeric_limits<double>::infinity();
    if (text == u"-Inf") return -std::numeric_limits<double>::infinity();
    bool ok = false;
    const double v = text.toDouble(&ok);
    if (!ok) return std::nullopt;
    return v;
}

void add(std::optional<double>& into, double value) { into = into.value_or(0.0) + value; }

}  // namespace

std::optional<Sample> parseLine(QStringView line) {
    line = line.trimmed();
    if (line.isEmpty() || line.front() == u'#') return std::nullopt;
    qsizetype i = 0;
    const qsizetype n = line.size();
    if (!isNameStart(line[0])) return std::nullopt;
    while (i < n && isNameChar(line[i])) ++i;
    Sample out;
    out.name = line.first(i).toString();
    if (i < n && line[i] == u'{') {
        // A label value may hold '}' or spaces inside its quotes, so the braces are matched by
        // walking the quoted strings (with their backslash escapes), not by searching for '}'.
        const qsizetype open = i++;
        bool quoted = false;
        for (; i < n; ++i) {
            const QChar c = line[i];
            if (quoted) {
                if (c == u'\\') ++i;
                else if (c == u'"') quoted = false;
            } else if (c == u'"') {
                quoted = true;
            } else if (c == u'}') {
                break;
            }
        }
        if (i >= n) return std::nullopt;  // unclosed braces or quotes
        out.labels = line.sliced(open + 1, i - open - 1).toString();
        ++i;
    }
    if (i >= n || !isBlank(line[i])) return std::nullopt;
    while (i < n && isBlank(line[i])) ++i;
    qsizetype end = i;
    while (end < n && !isBlank(line[end])) ++end;
    const auto value = parseValue(line.sliced(i, end - i));
    if (!value) return std::nullopt;
    out.value = *value;  // an optional timestamp may follow; the page times its own scrapes
    return out;
}

Figures parseFigures(QStringView text) {
    Figures f;
    for (QStringView line : text.split(u'\n')) {
        const auto s = parseLine(line);
        if (!s) continue;
        if (s->name == u"workbench:num_requests_running") add(f.running, s->value);
        else if (s->name == u"workbench:num_requests_waiting") add(f.waiting, s->value);
        else if (s->name == u"workbench:request_success_total") add(f.completed, s->value);
        else if (s->name == u"workbench:generation_tokens_total") add(f.generationTokens, s->value);
        else if (s->name == u"workbench:prompt_tokens_total") add(f.promptTokens, s->value);
        else if (s->name == u"workbench:kv_cache_usage_bytes") add(f.kvBytes, s->value);
        else if (s->name == u"workbench:kv_cache_usage_perc") add(f.kvFraction, s->value);
    }
    return f;
}

std::optional<double> kvUsageFraction(QStringView text) {
    // In order of preference: a server exposing two (vLLM mid-rename) is read by its newer name.
    static const char16_t* const kNames[] = {u"workbench:kv_cache_usage_perc", u"vllm:kv_cache_usage_perc",
                                             u"vllm:gpu_cache_usage_perc", u"sglang:token_usage",
                                             u"llamacpp:kv_cache_usage_ratio"};
    constexpr int kCount = static_cast<int>(std::size(kNames));
    std::optional<double> found[kCount];
    for (QStringView line : text.split(u'\n')) {
        const auto s = parseLine(line);
        if (!s || !std::isfinite(s->value)) continue;
        for (int i = 0; i < kCount; ++i)
            if (s->name == QStringView(kNames[i])) found[i] = std::max(found[i].value_or(s->value), s->value);
    }
    for (const auto& f : found)
        if (f) return std::clamp(*f, 0.0, 1.0);
    return std::nullopt;
}

std::optional<double> tokensPerSecond(const Figures& before, const Figures& after, double seconds) {
    if (!before.generationTokens || !after.generationTokens) return std::nullopt;
    const double delta = *after.generationTokens - *before.generationTokens;
    if (delta <= 0 || seconds <= 0) return 0.0;
    return delta / seconds;
}

}  // namespace servermetrics
