#include "inference/phrase_bans.h"

#include "baton/engine/text.h"

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

PhraseBans::PhraseBans(const std::vector<std::string>& phrases, bool insideWords)
    : m_insideWords(insideWords) {
    for (const std::string& p : phrases)
        if (!p.empty())
            m_phrases.push_back(lowered(p));
}

bool PhraseBans::startsWord(const std::string& t, size_t at, char before,
                            const std::string& p) const {
    if (m_insideWords || !isWordByte(p.front()))
        return true;
    return !isWordByte(at == 0 ? before : t[at - 1]);
}

size_t PhraseBans::firstMatch(const std::string& text, char before, bool atEnd) const {
    const std::string t = lowered(text);
    size_t best = std::string::npos;
    for (const std::string& p : m_phrases)
        for (size_t at = t.find(p); at < best; at = t.find(p, at + 1)) {
            const size_t end = at + p.size();
            const bool endsWord = m_insideWords || !isWordByte(p.back()) ||
                                  (end == t.size() ? atEnd : !isWordByte(t[end]));
            if (endsWord && startsWord(t, at, before, p)) {
                best = at;
                break;
            }
        }
    return best;
}

size_t PhraseBans::holdFrom(const std::string& text, char before) const {
    const std::string t = lowered(text);
    size_t hold = t.size(); // the earliest start of a tail that must wait
    for (const std::string& p : m_phrases) {
        // A tail that is a proper start of the phrase (from a word boundary).
        for (size_t len = std::min(p.size() - 1, t.size()); len > 0; --len) {
            const size_t at = t.size() - len;
            if (at >= hold)
                break;
            if (t.compare(at, len, p, 0, len) == 0 && startsWord(t, at, before, p)) {
                hold = at;
                break;
            }
        }
        // The whole phrase at the very end, waiting to see whether a word goes on.
        if (!m_insideWords && isWordByte(p.back()) && t.size() >= p.size()) {
            const size_t at = t.size() - p.size();
            if (at < hold && t.compare(at, p.size(), p) == 0 && startsWord(t, at, before, p))
                hold = at;
        }
    }
    return hold;
}

} // namespace baton::engine
