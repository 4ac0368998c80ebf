// Holds back streamed text that may be the start of a stop string, so that a stop
// string never reaches the output, not even in part.
#pragma once

#include <string>
#include <vector>

namespace baton::engine {

class StopMatcher {
public:
    explicit StopMatcher(const std::vector<std::string>& stops)
        : m_stops(stops) {}

    // Returns the text that is safe to emit; sets `matched` when a stop string occurred
    // (the returned text then ends just before it).
    std::string feed(const std::string& text, bool& matched);
    // The text still held back (at the end of generation).
    std::string flush();
    // The stop string that matched (empty before one did).
    const std::string& matched() const { return m_matched; }

private:
    std::vector<std::string> m_stops;
    std::string m_matched;
    std::string m_pending;
};

} // namespace baton::engine
