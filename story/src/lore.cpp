#include "baton/story/lore.h"

#include "text_util.h"

#include <baton/engine/text.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

namespace baton::story {

namespace {

char lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// The first of keys that occurs in text ("" when none does).
std::string firstOccurring(std::string_view text, const std::vector<std::string>& keys) {
    for (const auto& k : keys) {
        const std::string key = trimmed(k);
        if (!key.empty() && keyOccurs(text, key))
            return key;
    }
    return {};
}

} // namespace

std::vector<std::string> splitKeys(std::string_view list) {
    std::vector<std::string> keys;
    size_t start = 0;
    while (start <= list.size()) {
        const size_t comma = std::min(list.find(',', start), list.size());
        std::string key = trimmed(std::string(list.substr(start, comma - start)));
        if (!key.empty())
            keys.push_back(std::move(key));
        start = comma + 1;
    }
    return keys;
}

std::string joinKeys(const std::vector<std::string>& keys) {
    std::string out;
    for (const auto& k : keys)
        out += (out.empty() ? "" : ", ") + k;
    return out;
}

std::string loreText(const storage::LoreEntry& entry) {
    return bracketLine(trimmed(entry.content));
}

bool keyOccurs(std::string_view text, std::string_view key) {
    if (key.empty() || key.size() > text.size())
        return false;
    for (size_t i = 0; i + key.size() <= text.size(); ++i) {
        size_t j = 0;
        while (j < key.size() && lower(text[i + j]) == lower(key[j]))
            ++j;
        if (j != key.size())
            continue;
        // A key that begins or ends with a word byte needs a word boundary there.
        const bool startOk =
            !engine::isWordByte(key.front()) || i == 0 || !engine::isWordByte(text[i - 1]);
        const size_t end = i + key.size();
        const bool endOk =
            !engine::isWordByte(key.back()) || end == text.size() || !engine::isWordByte(text[end]);
        if (startOk && endOk)
            return true;
    }
    return false;
}

LoreSelection selectLore(const std::vector<storage::LoreEntry>& entries, std::string_view storyText,
                         const engine::Tokenizer& tokenizer, int budget) {
    LoreSelection out;
    out.budget = std::max(0, budget);
    std::map<int, std::string> recent; // by scan depth: entries often share one
    std::vector<const storage::LoreEntry*> ordered;
    for (const auto& e : entries)
        if (e.enabled && !trimmed(e.content).empty())
            ordered.push_back(&e);
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const auto* a, const auto* b) { return a->order < b->order; });
    for (const auto* e : ordered) {
        const int depth = std::max(1, e->scanDepth);
        auto it = recent.find(depth);
        if (it == recent.end())
            it = recent.emplace(depth, recentText(storyText, depth, tokenizer)).first;
        std::string key = firstOccurring(it->second, e->keys);
        if (key.empty())
            continue;
        if (!e->secondaryKeys.empty()) {
            const std::string second = firstOccurring(it->second, e->secondaryKeys);
            if (second.empty()) {
                out.withoutSecondKey[e->id] = key;
                continue;
            }
            key += " + " + second;
        }
        LoreMatch m;
        m.entry = *e;
        m.key = std::move(key);
        m.text = loreText(*e);
        m.tokens = static_cast<int>(tokenizer.encode(m.text).size());
        m.placed = out.tokens + m.tokens <= out.budget;
        if (m.placed)
            out.tokens += m.tokens;
        out.matches.push_back(std::move(m));
    }
    return out;
}

std::string LoreSelection::recordJson() const {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& m : matches)
        if (m.placed)
            a.push_back({{"id", m.entry.id}, {"key", m.key}, {"tokens", m.tokens}});
    return a.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace baton::story
