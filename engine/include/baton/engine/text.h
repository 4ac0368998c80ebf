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

} // namespace baton::engine
