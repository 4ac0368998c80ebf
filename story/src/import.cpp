#include "baton/story/import.h"

#include <baton/engine/books.h>

namespace baton::story {

ImportedStory storyFromText(std::string text, std::string fallbackTitle) {
    ImportedStory s;
    if (text.rfind("# ", 0) == 0) {
        const size_t eol = text.find('\n');
        s.title = text.substr(2, eol == std::string::npos ? std::string::npos : eol - 2);
        if (!s.title.empty() && s.title.back() == '\r')
            s.title.pop_back();
        text = eol == std::string::npos ? std::string() : text.substr(eol + 1);
        if (text.rfind("\n", 0) == 0)
            text.erase(0, 1);
        else if (text.rfind("\r\n", 0) == 0)
            text.erase(0, 2);
    }
    if (s.title.empty())
        s.title = std::move(fallbackTitle);
    s.text = std::move(text);
    return s;
}

Result<ImportedStory> importBook(const std::string& path, bool unwrap) {
    auto book = engine::readBook(path, unwrap);
    if (!book)
        return engineError(book.error());
    if (engine::isEpubFile(path))
        return ImportedStory{book->title, book->text};
    return storyFromText(std::move(book->text), book->title);
}

std::string exportedText(const std::string& title, const std::string& text, ExportFormat format) {
    if (format == ExportFormat::Text)
        return text;
    // A title on one line (storyFromText reads it back up to the line break).
    std::string heading = title;
    for (char& c : heading)
        if (c == '\n' || c == '\r')
            c = ' ';
    return "# " + heading + "\n\n" + text;
}

} // namespace baton::story
