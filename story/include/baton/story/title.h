// A story's title from its opening words, for stories the user has not named yet.
#pragma once

#include <string>

namespace baton::story {

// The titles a new story gets before it is named ("Untitled story", "Untitled
// adventure", "Untitled", or nothing).
bool isUntitled(const std::string& title);

// The opening words of text as a title: the first line's first words (an adventure's
// "> " dropped), at most about 40 characters, cut at a word with "…"; "" when the text
// has no words yet.
std::string titleFromText(const std::string& text);

} // namespace baton::story
