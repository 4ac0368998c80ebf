// Small text helpers the story layer's prompt pieces share.
#pragma once

#include <string>

namespace baton::story {

// s without leading and trailing spaces, tabs and line breaks.
std::string trimmed(const std::string& s);
// text in brackets on a line of its own: "\n[text]\n".
std::string bracketLine(const std::string& text);

} // namespace baton::story
