// GPT-2's pre-tokenizer: splits text into the pieces that
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// matches, leftmost alternative first. Hand-written (no regex engine) so that it
// is exact, fast and independent of the C library's locale. A byte that is not
// part of valid UTF-8 counts as a character of the [^\s\p{L}\p{N}] class.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

namespace baton::engine {

// Byte ranges [begin, end) of the pieces, covering the whole text in order.
std::vector<std::pair<size_t, size_t>> gpt2PreTokenize(std::string_view text);

} // namespace baton::engine
