// Banned phrases (KoboldCpp's banned strings, NovelAI's banned sequences): texts that
// must never appear in what is generated. The generator holds generated tokens back
// while their text could still become one of them, and when one is completed it goes
// back to the token where it began and samples again without that token there.
// Matching ignores ASCII case ("Shivers" is "shivers"). A phrase matches as a whole
// word by default: where it begins or ends with a word byte (engine/text.h:
// isWordByte), the text beside it there must not be one, so "her" bans "her," and
// "Her " but not "there" or "father". With insideWords it matches anywhere.
#pragma once

#include <string>
#include <vector>

namespace baton::engine {

class PhraseBans {
public:
    PhraseBans(const std::vector<std::string>& phrases, bool insideWords);

    bool empty() const { return m_phrases.empty(); }
    // The start of the earliest complete phrase in `text`, or std::string::npos.
    // `before` is the byte before the text (0: none, the start of the stream). A whole
    // word that ends the text is complete only `atEnd` (nothing can follow it).
    size_t firstMatch(const std::string& text, char before, bool atEnd) const;
    // The earliest position of `text` from which its tail could still grow into a
    // phrase, or is one waiting for the byte after it (text.size() when none):
    // what must be held back.
    size_t holdFrom(const std::string& text, char before) const;

private:
    // Whether the phrase p may begin at `at` of t (a word boundary there, when needed).
    bool startsWord(const std::string& t, size_t at, char before, const std::string& p) const;

    std::vector<std::string> m_phrases; // lower-cased
    bool m_insideWords;
};

} // namespace baton::engine
