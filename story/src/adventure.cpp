#include "baton/story/adventure.h"

#include <algorithm>
#include <cctype>

namespace baton::story {

namespace {

bool isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Trimmed, with every run of white space one space (QString::simplified's rule).
std::string simplified(std::string_view s) {
    std::string out;
    bool space = false;
    for (char c : s) {
        if (isSpace(c)) {
            space = !out.empty();
            continue;
        }
        if (space)
            out += ' ';
        space = false;
        out += c;
    }
    return out;
}

bool startsWith(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}
bool endsWith(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Straight and curly double quotes, and apostrophes used as quotes.
const std::string_view kQuotes[] = {"\"", "'", "\u201c", "\u201d"};

std::string withoutQuotes(std::string s) {
    for (bool removed = true; removed;) {
        removed = false;
        for (std::string_view q : kQuotes) {
            if (startsWith(s, q)) {
                s.erase(0, q.size());
                removed = true;
            }
            if (endsWith(s, q)) {
                s.erase(s.size() - q.size());
                removed = true;
            }
        }
    }
    return simplified(s);
}

std::string withPeriod(const std::string& s) {
    for (std::string_view mark : {".", "!", "?", "\u2026", "\"", "'", "\u201d", "\u2019"})
        if (endsWith(s, mark))
            return s;
    return s + ".";
}

bool isUpper(char c) {
    return c >= 'A' && c <= 'Z';
}
bool isLower(char c) {
    return c >= 'a' && c <= 'z';
}

// "I look", "you look" -> "look"; "I" or "you" alone -> "".
std::string withoutSubject(const std::string& s) {
    for (std::string_view subject : {"i", "you"}) {
        if (s.size() < subject.size())
            continue;
        bool same = true;
        for (size_t i = 0; i < subject.size() && same; ++i)
            same = char(std::tolower(static_cast<unsigned char>(s[i]))) == subject[i];
        if (!same)
            continue;
        if (s.size() == subject.size())
            return {};
        if (s[subject.size()] == ' ')
            return s.substr(subject.size() + 1);
    }
    return s;
}

} // namespace

std::string frameTurn(TurnKind kind, std::string_view input, std::string_view before) {
    std::string text = simplified(input);
    if (text.empty())
        return {};
    std::string lead;
    if (!before.empty()) {
        int newlines = 0;
        for (size_t i = before.size(); i > 0 && before[i - 1] == '\n'; --i)
            ++newlines;
        lead.assign(size_t(std::max(0, 2 - newlines)), '\n');
    }
    switch (kind) {
    case TurnKind::Story:
        return lead + text;
    case TurnKind::Say:
        text = withoutQuotes(text);
        if (text.empty())
            return {};
        if (isLower(text[0]))
            text[0] = char(text[0] - 'a' + 'A');
        return lead + "> You say, \u201c" + withPeriod(text) + "\u201d\n\n";
    case TurnKind::Do:
    default:
        text = withoutSubject(text);
        if (text.empty())
            return {};
        // A verb starts lower case (but "I" and names in capitals stay).
        if (text.size() > 1 && isUpper(text[0]) && isLower(text[1]))
            text[0] = char(text[0] - 'A' + 'a');
        return lead + "> You " + withPeriod(text) + "\n\n";
    }
}

engine::SamplingOptions continuationSampling(storage::StoryMode mode,
                                             engine::SamplingOptions sampling) {
    if (mode == storage::StoryMode::Adventure &&
        std::find(sampling.stopStrings.begin(), sampling.stopStrings.end(), kAdventureStop) ==
            sampling.stopStrings.end())
        sampling.stopStrings.push_back(kAdventureStop);
    return sampling;
}

} // namespace baton::story
