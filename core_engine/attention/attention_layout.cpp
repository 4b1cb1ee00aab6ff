// Per-layer attention: the ';'-joined terms of a layout, their canonical name, and which layers
// each policy group runs once the model's layer count is known.
#include <algorithm>
#include <charconv>

#include "attention/attention_policy.h"

namespace workbench {
namespace {

Status bad(std::string_view spec, const std::string& what) {
    return error(StatusCode::invalid_argument, "--attention '" + std::string(spec) + "': " + what);
}

bool parse_int(std::string_view text, int32_t& out) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
}

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

// "0-9+20-29+31" → {{0, 9}, {20, 29}, {31, 31}}.
bool parse_layer_set(std::string_view text, std::vector<std::pair<int32_t, int32_t>>& out) {
    while (!text.empty()) {
        const size_t plus = text.find('+');
        const std::string_view item = text.substr(0, plus);
        text = plus == std::string_view::npos ? std::string_view() : text.substr(plus + 1);
        const size_t dash = item.find('-');
        int32_t a = 0, b = 0;
        if (dash == std::string_view::npos) {
            if (!parse_int(item, a)) return false;
            b = a;
        } else if (!parse_int(item.substr(0, dash), a) || !parse_int(item.substr(dash + 1), b)) {
            return false;
        }
        if (a < 0 || b < a) return false;
        out.emplace_back(a, b);
    }
    return !out.empty();
}

std::string layer_set_name(const std::vector<std::pair<int32_t, int32_t>>& set) {
    std::string out;
    for (const auto& [a, b] : set) {
        if (!out.empty()) out += '+';
        out += a == b ? std::to_string(a) : std::to_string(a) + "-" + std::to_string(b);
    }
    return out;
}

bool names_layers(const AttentionSpec& s) { return s.first_layer != 0 || s.last_layer != -1; }

}  // namespace

Result<AttentionLayout> parse_attention_layout(std::string_view raw) {
    AttentionLayout layout;
    std::string_view rest = raw;
    while (true) {
        const size_t semi = rest.find(';');
        const std::string_view term_text = trimmed(rest.substr(0, semi));
        if (!term_text.empty() || semi != std::string_view::npos || layout.empty()) {
            if (term_text.empty()) return bad(raw, "an empty term; terms are joined by ';'");
            AttentionTerm term;
            // layers= belongs to the term, except in cross_layer where it is the sharing range.
            std::string spec_text(term_text);
            const size_t colon = spec_text.find(':');
            std::string params = colon == std::string::npos ? "" : spec_text.substr(colon + 1);
            std::string kept, layers_value;
            bool has_layers = false;
            for (size_t pos = 0; pos <= params.size() && !params.empty();) {
                const size_t comma = std::min(params.find(',', pos), params.size());
                const std::string item(trimmed(std::string_view(params).substr(pos, comma - pos)));
                if (item.rfind("layers=", 0) == 0) has_layers = true, layers_value = item.substr(7);
                else kept += (kept.empty() ? "" : ",") + item;
                pos = comma + 1;
            }
            const std::string kind = std::string(trimmed(spec_text.substr(0, colon)));
            const bool range_is_spec = kind == "cross_layer";
            if (has_layers && !range_is_spec) spec_text = kind + (kept.empty() ? "" : ":" + kept);
            WB_ASSIGN_OR_RETURN(term.spec, parse_attention_spec(spec_text));
            if (range_is_spec) {
                if (names_layers(term.spec)) term.layers.emplace_back(term.spec.first_layer, term.spec.last_layer);
            } else if (has_layers && !parse_layer_set(layers_value, term.layers)) {
                return bad(raw, "layers '" + layers_value + "': expected ranges A-B or layers A joined by '+', 0 <= A <= B");
            }
            layout.push_back(std::move(term));
        }
        if (semi == std::string_view::npos) break;
        rest = rest.substr(semi + 1);
    }
    if (layout.size() > 1) {
        int32_t n_rest = 0;
        for (const AttentionTerm& t : layout) {
            if (t.spec.kind == AttentionKind::latent)
                return bad(raw, "latent runs on every layer (the model rebuilds K and V from it); it cannot be mixed with other terms");
            if (t.layers.empty() && t.spec.kind == AttentionKind::cross_layer)
                return bad(raw, "a cross_layer term among others names its range, layers=A-B");
            if (t.layers.empty() && ++n_rest > 1) return bad(raw, "only one term may leave out layers= (it takes the layers left over)");
        }
    } else if (layout.front().spec.kind == AttentionKind::latent && !layout.front().layers.empty()) {
        return bad(raw, "latent runs on every layer; it takes no layers=");
    }
    return layout;
}

std::string attention_layout_name(const AttentionLayout& layout) {
    std::string out;
    for (const AttentionTerm& t : layout) {
        if (!out.empty()) out += ';';
        std::string name = attention_spec_name(t.spec);
        if (!t.layers.empty() && t.spec.kind != AttentionKind::cross_layer)
            name += (name.find(':') == std::string::npos ? ":layers=" : ",layers=") + layer_set_name(t.layers);
        out += name;
    }
    return out;
}

Result<std::vector<LayerGroupPlan>> resolve_attention_layout(const AttentionLayout& layout, int32_t n_layers) {
    const std::string name = attention_layout_name(layout);
    if (layout.size() == 1 && (layout.front().layers.empty() || layout.front().spec.kind == AttentionKind::cross_layer))
        return std::vector<LayerGroupPlan>{{layout.front().spec, {}}};  // every layer, as a single spec
    std::vector<int32_t> term_of(static_cast<size_t>(n_layers), -1);
    for (size_t i = 0; i < layout.size(); ++i)
        for (const auto& [a, b] : layout[i].layers) {
            if (b >= n_layers)
                return bad(name, "layers " + std::to_string(a) + "-" + std::to_string(b) + " outside this model's 0-" +
                                     std::to_string(n_layers - 1));
            for (int32_t il = a; il <= b; ++il) {
                if (term_of[static_cast<size_t>(il)] >= 0)
                    return bad(name, "layer " + std::to_string(il) + " is named by two terms");
                term_of[static_cast<size_t>(il)] = static_cast<int32_t>(i);
            }
        }
    std::vector<LayerGroupPlan> groups;
    for (size_t i = 0; i < layout.size(); ++i) groups.push_back({layout[i].spec, {}});
    groups.push_back({AttentionSpec{}, {}});  // full attention for the layers no term takes
    const auto rest = std::find_if(layout.begin(), layout.end(), [](const AttentionTerm& t) { return t.layers.empty(); });
    const size_t rest_group = rest == layout.end() ? layout.size() : static_cast<size_t>(rest - layout.begin());
    for (int32_t il = 0; il < n_layers; ++il) {
        const int32_t t = term_of[static_cast<size_t>(il)];
        groups[t >= 0 ? static_cast<size_t>(t) : rest_group].layers.push_back(il);
    }
    for (size_t i = 0; i < layout.size(); ++i)
        if (groups[i].layers.empty()) return bad(name, "the term " + attention_spec_name(layout[i].spec) + " is left no layer");
    if (groups.back().layers.empty()) groups.pop_back();
    return groups;
}

}  // namespace workbench
