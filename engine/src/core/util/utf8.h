// UTF-8 decoding and validation (RFC 3629: no overlongs, no surrogates, <= U+10FFFF).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace baton::engine::utf8 {

constexpr char32_t kInvalid = 0xFFFFFFFF;

// Decodes the code point at text[pos]. On success returns it and sets `length` to
// its byte count. On an invalid or incomplete sequence returns kInvalid and sets
// `length` to 1 (the offending byte).
char32_t decode(std::string_view text, size_t pos, size_t& length);

// The byte offset of the first invalid sequence, or npos if the text is valid.
size_t firstInvalid(std::string_view text);
inline bool isValid(std::string_view text) {
    return firstInvalid(text) == std::string_view::npos;
}

// Length of the longest prefix of `bytes` that does not end inside a character
// that could still be completed by more bytes.
size_t completePrefixLength(std::string_view bytes);

// Replaces every invalid byte with U+FFFD.
std::string sanitize(std::string_view text);

void append(std::string& out, char32_t cp);

} // namespace baton::engine::utf8
