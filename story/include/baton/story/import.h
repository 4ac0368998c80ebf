// A book file as a new story (baton-cli story import, the app's File > Import story):
// its title and its text, the story's first passage; and a story as a file (story
// export, File > Export story), which imports back to the same title and text.
#pragma once

#include "baton/story/error.h"

#include <string>

namespace baton::story {

struct ImportedStory {
    std::string title;
    std::string text;
};

// A text's "# " heading line as the title, taken out of the text (with the blank line
// after it); without one, `fallbackTitle`.
ImportedStory storyFromText(std::string text, std::string fallbackTitle);

// A book file (engine/books.h: UTF-8 text, Markdown or EPUB). An EPUB gives its title
// and chapters; a text file its "# " heading, else its name, and with unwrap its
// hard-wrapped lines joined into paragraphs. Errors are the engine's (a missing file,
// invalid UTF-8 with its offset, a broken or DRM-protected EPUB).
Result<ImportedStory> importBook(const std::string& path, bool unwrap);

enum class ExportFormat {
    Markdown, // "# Title", a blank line, the text
    Text,     // the text alone
};
// The file a story's text is exported as.
std::string exportedText(const std::string& title, const std::string& text, ExportFormat format);

} // namespace baton::story
