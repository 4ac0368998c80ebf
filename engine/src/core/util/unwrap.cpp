// Unwrapping hard-wrapped plain text (see baton/engine/text.h).
//
// Project Gutenberg books are wrapped at about 70 columns; a model trained on them
// learns to write a line break every ten words. The rules, in order:
//  - A document is "wrapped" when most of its lines are close to one width W (the
//    95th percentile of line lengths, at most 100 columns). Otherwise only the verse
//    numbers below are handled: lines stay as they are.
//  - Numbered verses ("  12 And ...", indented, numbered 1, 2, 3, ... in sequence) start
//    a line of their own and lose their number.
//  - Within a paragraph (lines between blank lines):
//      * an unindented line of at least 0.6 W is joined with the next unindented line;
//      * an indented paragraph (quoted letters, verse) is joined the same way against
//        its own width, unless it reads as verse: most of its lines start with a
//        capital, or it has two lines only and the first is short;
//      * a line that changes the indentation always starts a new line.
//  Blank lines, and so paragraphs and dialogue, are kept as they are.
#include "baton/engine/text.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace baton::engine {

namespace {

struct Line {
    std::string_view text; // without its line ending
    size_t indent = 0;     // leading spaces and tabs
    size_t length = 0;     // code points, indentation included
    bool blank = false;
    int verse = -1;       // the verse number that opens this line, or -1
    size_t bodyStart = 0; // where the text after the indentation (and verse number) starts
};

size_t codePoints(std::string_view s) {
    size_t n = 0;
    for (unsigned char c : s)
        if ((c & 0xC0) != 0x80)
            ++n;
    return n;
}

// "  12 And ..." -> 12 (and where "And" starts); else -1.
int verseNumber(std::string_view s, size_t indent, size_t& body) {
    if (indent == 0)
        return -1;
    size_t i = indent;
    int number = 0, digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && digits < 4) {
        number = number * 10 + (s[i] - '0');
        ++i;
        ++digits;
    }
    if (digits == 0 || i >= s.size() || (s[i] != ' ' && s[i] != '\t'))
        return -1;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
        ++i;
    if (i >= s.size())
        return -1;
    body = i;
    return number;
}

bool startsUpper(std::string_view s) {
    size_t i = 0;
    while (i < s.size() && (s[i] == '"' || s[i] == '\'' || s[i] == '(' || s[i] == '_'))
        ++i;
    return i < s.size() && std::isupper(static_cast<unsigned char>(s[i]));
}

size_t firstWordLength(std::string_view s) {
    const size_t end = s.find_first_of(" \t");
    return codePoints(s.substr(0, end));
}

std::vector<Line> splitLines(std::string_view text) {
    std::vector<Line> lines;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t nl = text.find('\n', pos);
        if (nl == std::string_view::npos)
            nl = text.size();
        std::string_view s = text.substr(pos, nl - pos);
        if (!s.empty() && s.back() == '\r')
            s.remove_suffix(1);
        Line l;
        l.text = s;
        while (l.indent < s.size() && (s[l.indent] == ' ' || s[l.indent] == '\t'))
            ++l.indent;
        l.blank = l.indent == s.size();
        // Trailing spaces do not count towards the width.
        size_t end = s.size();
        while (end > l.indent && (s[end - 1] == ' ' || s[end - 1] == '\t'))
            --end;
        l.text = s.substr(0, end);
        l.length = codePoints(l.text);
        l.bodyStart = l.indent;
        lines.push_back(l);
        if (nl == text.size())
            break;
        pos = nl + 1;
    }
    return lines;
}

// Marks the numbered verses: a document counts as versed when at least ten
// indented numbers follow each other (n, n + 1, or a new chapter's 1).
void markVerses(std::vector<Line>& lines) {
    int previous = 0, inSequence = 0;
    std::vector<std::pair<size_t, size_t>> found; // line, body start
    for (size_t i = 0; i < lines.size(); ++i) {
        size_t body = 0;
        const int n = verseNumber(lines[i].text, lines[i].indent, body);
        if (n < 1)
            continue;
        if (n == previous + 1 || n == 1)
            ++inSequence;
        previous = n;
        found.push_back({i, body});
    }
    if (inSequence < 10 || inSequence * 10 < int(found.size()) * 9)
        return;
    previous = 0;
    for (auto [i, body] : found) {
        size_t b = 0;
        lines[i].verse = verseNumber(lines[i].text, lines[i].indent, b);
        lines[i].bodyStart = body;
        lines[i].indent = 0; // a verse line reads as unindented text
        lines[i].length = codePoints(lines[i].text.substr(body));
    }
}

// The wrap width, or 0 when the text is not hard-wrapped.
size_t wrapWidth(const std::vector<Line>& lines) {
    std::vector<size_t> lengths;
    for (const auto& l : lines)
        if (!l.blank)
            lengths.push_back(l.length);
    if (lengths.size() < 8)
        return 0;
    std::sort(lengths.begin(), lengths.end());
    const size_t width = lengths[lengths.size() * 95 / 100];
    if (width < 30 || width > 100)
        return 0;
    const size_t nearWidth = size_t(std::count_if(lengths.begin(), lengths.end(), [&](size_t n) {
        return n * 10 >= width * 7 && n <= width;
    }));
    return nearWidth * 2 >= lengths.size() ? width : 0;
}

} // namespace

std::string unwrapText(std::string_view text) {
    std::vector<Line> lines = splitLines(text);
    markVerses(lines);
    const size_t width = wrapWidth(lines);

    // join[i]: line i + 1 continues line i (joined with one space).
    std::vector<bool> join(lines.size(), false);
    for (size_t start = 0; start < lines.size();) {
        if (lines[start].blank) {
            ++start;
            continue;
        }
        size_t end = start;
        while (end < lines.size() && !lines[end].blank)
            ++end;
        // [start, end) is a paragraph.
        if (width > 0) {
            const bool indented = lines[start].indent > 0 && lines[start].verse < 0;
            size_t own = 0, upper = 0;
            for (size_t i = start; i < end; ++i) {
                own = std::max(own, lines[i].length);
                upper += startsUpper(lines[i].text.substr(lines[i].bodyStart)) ? 1 : 0;
            }
            const size_t count = end - start;
            const bool verse = indented && ((count >= 3 && upper * 10 >= count * 6) ||
                                            (count == 2 && lines[start].length * 10 < width * 8));
            for (size_t i = start; i + 1 < end; ++i) {
                const Line &a = lines[i], &b = lines[i + 1];
                if (b.verse >= 0 || a.indent != b.indent || verse)
                    continue;
                if (!indented) {
                    join[i] = a.length * 10 >= width * 6;
                } else {
                    // Wrapped against the paragraph's own width: the next word did
                    // not fit on this line.
                    join[i] = a.length + 1 + firstWordLength(b.text.substr(b.bodyStart)) >
                                  own - std::min<size_t>(own, 8) &&
                              a.length * 10 >= own * 6;
                }
            }
        }
        start = end;
    }

    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < lines.size(); ++i) {
        const Line& l = lines[i];
        const bool continues = i > 0 && join[i - 1];
        if (continues) {
            out += ' ';
            out.append(l.text.substr(l.bodyStart));
        } else {
            out.append(l.verse >= 0 ? l.text.substr(l.bodyStart) : l.text);
        }
        if (i + 1 < lines.size() && !join[i])
            out += '\n';
    }
    return out;
}

} // namespace baton::engine
