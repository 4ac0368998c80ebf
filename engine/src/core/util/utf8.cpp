#include "util/utf8.h"

namespace baton::engine::utf8 {

namespace {

// Expected sequence length for a lead byte, 0 if it cannot start a sequence.
int sequenceLength(unsigned char lead) {
    if (lead < 0x80)
        return 1;
    if (lead >= 0xC2 && lead <= 0xDF)
        return 2;
    if (lead >= 0xE0 && lead <= 0xEF)
        return 3;
    if (lead >= 0xF0 && lead <= 0xF4)
        return 4;
    return 0;
}

// Valid range of the second byte for a lead byte (excludes overlongs and surrogates).
void secondByteRange(unsigned char lead, unsigned char& lo, unsigned char& hi) {
    lo = 0x80;
    hi = 0xBF;
    if (lead == 0xE0)
        lo = 0xA0;
    else if (lead == 0xED)
        hi = 0x9F;
    else if (lead == 0xF0)
        lo = 0x90;
    else if (lead == 0xF4)
        hi = 0x8F;
}

} // namespace

char32_t decode(std::string_view text, size_t pos, size_t& length) {
    length = 1;
    const auto lead = static_cast<unsigned char>(text[pos]);
    const int n = sequenceLength(lead);
    if (n == 1)
        return lead;
    if (n == 0 || pos + n > text.size())
        return kInvalid;
    unsigned char lo, hi;
    secondByteRange(lead, lo, hi);
    const auto b1 = static_cast<unsigned char>(text[pos + 1]);
    if (b1 < lo || b1 > hi)
        return kInvalid;
    char32_t cp = lead & (0x7F >> n);
    cp = (cp << 6) | (b1 & 0x3F);
    for (int i = 2; i < n; ++i) {
        const auto b = static_cast<unsigned char>(text[pos + i]);
        if ((b & 0xC0) != 0x80)
            return kInvalid;
        cp = (cp << 6) | (b & 0x3F);
    }
    length = static_cast<size_t>(n);
    return cp;
}

size_t firstInvalid(std::string_view text) {
    size_t pos = 0;
    while (pos < text.size()) {
        const auto c = static_cast<unsigned char>(text[pos]);
        if (c < 0x80) {
            ++pos;
            continue;
        }
        size_t len;
        if (decode(text, pos, len) == kInvalid)
            return pos;
        pos += len;
    }
    return std::string_view::npos;
}

size_t completePrefixLength(std::string_view bytes) {
    // Look back at most 3 bytes for a lead byte whose sequence is incomplete but
    // still valid so far.
    const size_t n = bytes.size();
    for (size_t back = 1; back <= 3 && back <= n; ++back) {
        const auto c = static_cast<unsigned char>(bytes[n - back]);
        if ((c & 0xC0) == 0x80)
            continue; // continuation byte: keep looking for the lead
        const int need = sequenceLength(c);
        if (need <= 1 || static_cast<size_t>(need) <= back)
            return n; // ASCII, invalid lead, or a complete sequence
        // Incomplete: check the bytes present are a valid start.
        unsigned char lo, hi;
        secondByteRange(c, lo, hi);
        if (back >= 2) {
            const auto b1 = static_cast<unsigned char>(bytes[n - back + 1]);
            if (b1 < lo || b1 > hi)
                return n;
        }
        return n - back;
    }
    return n;
}

void append(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

std::string sanitize(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    size_t pos = 0;
    while (pos < text.size()) {
        size_t len;
        if (decode(text, pos, len) == kInvalid)
            append(out, 0xFFFD);
        else
            out.append(text.substr(pos, len));
        pos += len;
    }
    return out;
}

} // namespace baton::engine::utf8

#include "baton/engine/text.h"

namespace baton::engine {

size_t firstInvalidUtf8(std::string_view text) {
    return utf8::firstInvalid(text);
}
std::string sanitizeUtf8(std::string_view text) {
    return utf8::sanitize(text);
}

} // namespace baton::engine
