#include "inference/phrase_bans.h"

#include <algorithm>

namespace baton::engine {

namespace {

char lower(char c) {
    return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c;
}

std::string lowered(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), lower);
    return s;
}

} // namespace

PhraseBans::PhraseBans(const std::vector<std::string>& phrases) {
    for (const std::string& p : phrases)
        if (!p.empty())
            m_phrases.push_back(lowered(p));
}

size_t PhraseBans::firstMatch(const std::string& text) const {
    const std::string t = lowered(text);
    size_t best = std::string::npos;
    for (const std::string& p : m_phrases) {
        const size_t at = t.find(p);
        if (at < best)
            best = at;
    }
    return best;
}

size_t PhraseBans::holdFrom(const std::string& text) const {
    const std::string t = lowered(text);
    size_t hold = 0; // the longest tail of the text that is a proper start of a phrase
    for (const std::string& p : m_phrases)
        for (size_t len = std::min(p.size() - 1, t.size()); len > hold; --len)
            if (t.compare(t.size() - len, len, p, 0, len) == 0) {
                hold = len;
                break;
            }
    return t.size() - hold;
}

} // namespace baton::engine
