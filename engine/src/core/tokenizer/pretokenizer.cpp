#include "tokenizer/pretokenizer.h"

#include "util/unicode.h"
#include "util/utf8.h"

#include <cstdint>

namespace baton::engine {

namespace {

enum class CharClass : uint8_t { Letter, Number, Space, Other };

struct Char {
    size_t offset;
    char32_t cp; // utf8::kInvalid for an invalid byte
    CharClass cls;
};

CharClass classify(char32_t cp) {
    if (cp == utf8::kInvalid)
        return CharClass::Other;
    if (unicode::isLetter(cp))
        return CharClass::Letter;
    if (unicode::isNumber(cp))
        return CharClass::Number;
    if (unicode::isWhiteSpace(cp))
        return CharClass::Space;
    return CharClass::Other;
}

// Length in characters of a contraction ('s 't 'm 'd 're 've 'll) at i, or 0.
size_t contractionAt(const std::vector<Char>& c, size_t i) {
    if (c[i].cp != U'\'' || i + 1 >= c.size())
        return 0;
    const char32_t a = c[i + 1].cp;
    if (a == U's' || a == U't' || a == U'm' || a == U'd')
        return 2;
    if (i + 2 < c.size()) {
        const char32_t b = c[i + 2].cp;
        if ((a == U'r' && b == U'e') || (a == U'v' && b == U'e') || (a == U'l' && b == U'l'))
            return 3;
    }
    return 0;
}

size_t runOf(const std::vector<Char>& c, size_t i, CharClass cls) {
    size_t j = i;
    while (j < c.size() && c[j].cls == cls)
        ++j;
    return j;
}

} // namespace

std::vector<std::pair<size_t, size_t>> gpt2PreTokenize(std::string_view text) {
    std::vector<Char> chars;
    chars.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        size_t len;
        const char32_t cp = utf8::decode(text, pos, len);
        chars.push_back({pos, cp, classify(cp)});
        pos += len;
    }
    const size_t n = chars.size();
    auto byteOffset = [&](size_t i) { return i < n ? chars[i].offset : text.size(); };

    std::vector<std::pair<size_t, size_t>> pieces;
    size_t i = 0;
    while (i < n) {
        size_t end = 0;
        if (const size_t k = contractionAt(chars, i)) {
            end = i + k;
        } else {
            // ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+'
            size_t start = i;
            if (chars[i].cp == U' ' && i + 1 < n && chars[i + 1].cls != CharClass::Space)
                start = i + 1;
            const CharClass cls = chars[start].cls;
            if (cls != CharClass::Space) {
                end = runOf(chars, start, cls);
            } else {
                // '\s+(?!\S)' then '\s+'
                const size_t runEnd = runOf(chars, i, CharClass::Space);
                if (runEnd == n || runEnd - i == 1)
                    end = runEnd;
                else
                    end = runEnd - 1;
            }
        }
        pieces.emplace_back(byteOffset(i), byteOffset(end));
        i = end;
    }
    return pieces;
}

} // namespace baton::engine
