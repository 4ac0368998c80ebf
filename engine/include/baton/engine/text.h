// Text helpers for callers of the engine.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace baton::engine {

// The byte offset of the first invalid UTF-8 sequence, or std::string_view::npos.
size_t firstInvalidUtf8(std::string_view text);
// Replaces every byte that is not part of valid UTF-8 with U+FFFD.
std::string sanitizeUtf8(std::string_view text);

// Whether a byte belongs to a word, for whole-word matching (world-info keys, banned
// phrases, the edit differ): an ASCII letter or digit, '_', or any byte of a multi-byte
// UTF-8 character, so "é" or "ß" never ends a word.
constexpr bool isWordByte(char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x80 || (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') ||
           (u >= 'A' && u <= 'Z') || c == '_';
}

// Joins the lines of hard-wrapped paragraphs (Project Gutenberg's ~70-column text)
// into one line each and keeps deliberate breaks: blank lines (paragraphs, dialogue),
// verse and other indented short lines, and lines that change the indentation.
// Numbered verses (the Bible's "  12 And ...") start a line of their own without
// their number. Text that is not hard-wrapped keeps its lines. The training corpus
// reader and book import both use it.
std::string unwrapText(std::string_view text);

} // namespace baton::engine
