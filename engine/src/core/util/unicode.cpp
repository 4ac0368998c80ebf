#include "util/unicode.h"

#include <algorithm>
#include <iterator>

namespace baton::engine::unicode {

namespace {

struct CodePointRange {
    char32_t first;
    char32_t last;
};

#include "util/unicode_tables.inc"

template <size_t N>
bool inRanges(const CodePointRange (&ranges)[N], char32_t cp) {
    const auto it =
        std::upper_bound(std::begin(ranges), std::end(ranges), cp,
                         [](char32_t c, const CodePointRange& r) { return c < r.first; });
    return it != std::begin(ranges) && cp <= std::prev(it)->last;
}

} // namespace

bool isLetter(char32_t cp) {
    if (cp < 0x80)
        return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z');
    return inRanges(kLetterRanges, cp);
}

bool isNumber(char32_t cp) {
    if (cp < 0x80)
        return cp >= '0' && cp <= '9';
    return inRanges(kNumberRanges, cp);
}

bool isWhiteSpace(char32_t cp) {
    return inRanges(kWhiteSpaceRanges, cp);
}

} // namespace baton::engine::unicode
