// Unicode character classes used by GPT-2's pre-tokenizer.
#pragma once

namespace baton::engine::unicode {

bool isLetter(char32_t cp);     // general category L*
bool isNumber(char32_t cp);     // general category N*
bool isWhiteSpace(char32_t cp); // White_Space property

} // namespace baton::engine::unicode
