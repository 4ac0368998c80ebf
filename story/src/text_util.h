// Small text helpers the story layer's prompt pieces share.
#pragma once

#include <baton/engine/tokenizer.h>

#include <string>
#include <string_view>

namespace baton::story {

// s without leading and trailing spaces, tabs and line breaks.
std::string trimmed(const std::string& s);
// text in brackets on a line of its own: "\n[text]\n".
std::string bracketLine(const std::string& text);
// Whether text[0, end) ends a sentence: . ! or ? and any closing quotes or brackets
// after it (' " ) ] and ’ ” »).
bool endsSentence(std::string_view text, size_t end);
// The last `depth` tokens of text, as text. Only its end is tokenized: 5 bytes a token,
// more while that holds no more than `depth` tokens, at most 16 bytes a token (which
// more than covers the text a depth of ordinary tokens spans).
std::string recentText(std::string_view text, int depth, const engine::Tokenizer& tokenizer);

} // namespace baton::story
