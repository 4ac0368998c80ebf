#include "inference/stop_matcher.h"

#include <algorithm>

namespace baton::engine {

std::string StopMatcher::feed(const std::string& text, bool& matched) {
    m_pending += text;
    matched = false;
    size_t cut = std::string::npos;
    for (const auto& s : m_stops) {
        const size_t at = m_pending.find(s);
        if (at != std::string::npos && (cut == std::string::npos || at < cut)) {
            cut = at;
            m_matched = s;
        }
    }
    if (cut != std::string::npos) {
        matched = true;
        std::string out = m_pending.substr(0, cut);
        m_pending.clear();
        return out;
    }
    size_t hold = 0; // longest suffix that is a proper prefix of a stop string
    for (const auto& s : m_stops)
        for (size_t len = std::min(s.size() - 1, m_pending.size()); len > hold; --len)
            if (m_pending.compare(m_pending.size() - len, len, s, 0, len) == 0) {
                hold = len;
                break;
            }
    std::string out = m_pending.substr(0, m_pending.size() - hold);
    m_pending.erase(0, m_pending.size() - hold);
    return out;
}

std::string StopMatcher::flush() {
    std::string out;
    out.swap(m_pending);
    return out;
}

} // namespace baton::engine
