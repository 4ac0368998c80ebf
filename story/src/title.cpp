#include "baton/story/title.h"

#include <baton/engine/text.h>

namespace baton::story {

namespace {

constexpr size_t kMaxTitle = 40;

bool space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

} // namespace

bool isUntitled(const std::string& title) {
    return title.empty() || title == "Untitled" || title == "Untitled story" ||
           title == "Untitled adventure";
}

std::string titleFromText(const std::string& text) {
    // The first line with words on it.
    size_t start = 0;
    std::string line;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos)
            end = text.size();
        line = text.substr(start, end - start);
        size_t b = 0;
        while (b < line.size() && (space(line[b]) || line[b] == '>'))
            ++b;
        line.erase(0, b);
        if (!line.empty())
            break;
        start = end + 1;
    }
    // Whole words up to the limit.
    std::string title;
    size_t i = 0;
    bool cut = false;
    while (i < line.size()) {
        while (i < line.size() && space(line[i]))
            ++i;
        size_t j = i;
        while (j < line.size() && !space(line[j]))
            ++j;
        if (j == i)
            break;
        const std::string word = line.substr(i, j - i);
        if (!title.empty() && title.size() + 1 + word.size() > kMaxTitle) {
            cut = true;
            break;
        }
        title += (title.empty() ? "" : " ") + word;
        i = j;
    }
    if (title.size() > kMaxTitle) { // one long word: cut it at a character boundary
        size_t n = kMaxTitle;
        while (n > 0 && (static_cast<unsigned char>(title[n]) & 0xC0) == 0x80)
            --n;
        title.resize(n);
        cut = true;
    }
    // A sentence's end needs no mark; trailing commas and the like go.
    while (!title.empty() && (title.back() == ',' || title.back() == ';' || title.back() == ':'))
        title.pop_back();
    if (cut && !title.empty())
        title += "\xE2\x80\xA6"; // …
    return engine::firstInvalidUtf8(title) == std::string::npos ? title : std::string();
}

} // namespace baton::story
