// Banned phrases (KoboldCpp's banned strings, NovelAI's banned sequences): texts that
// must never appear in what is generated. The generator holds generated tokens back
// while their text could still become one of them, and when one is completed it goes
// back to the token where it began and samples again without that token there.
// Matching ignores ASCII case ("Shivers" is "shivers").
#pragma once

#include <string>
#include <vector>

namespace baton::engine {

class PhraseBans {
public:
    explicit PhraseBans(const std::vector<std::string>& phrases);

    bool empty() const { return m_phrases.empty(); }
    // The start of the earliest complete phrase in `text`, or std::string::npos.
    size_t firstMatch(const std::string& text) const;
    // The earliest position of `text` from which its tail could still grow into a
    // phrase (text.size() when none could): what must be held back.
    size_t holdFrom(const std::string& text) const;

private:
    std::vector<std::string> m_phrases; // lower-cased
};

} // namespace baton::engine
