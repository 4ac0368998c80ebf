// A plain-text or Markdown book as story import reads it (story::importBook: UTF-8
// check, "# " title, hard-wrapped lines joined into paragraphs): an error for invalid
// UTF-8, else a story whose title and text are valid UTF-8 and whose text keeps every
// word of the book.
#include "fuzz_support.h"

#include <baton/engine/text.h>
#include <baton/story/import.h>

using namespace baton;

namespace {
size_t words(std::string_view s) {
    size_t n = 0;
    bool in = false;
    for (char c : s) {
        const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
        n += !space && !in;
        in = !space;
    }
    return n;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0)
        return 0;
    const bool unwrap = data[0] & 1;
    const auto text = fuzz::asText(data + 1, size - 1);
    const std::string path = fuzz::writeScratch(data[0] & 2 ? "book.md" : "book.txt", text);
    auto story = story::importBook(path, unwrap);
    const bool valid = engine::firstInvalidUtf8(text) == std::string::npos;
    fuzz::check(bool(story) == valid, "a book is read exactly when it is valid UTF-8");
    if (!story)
        return 0;
    fuzz::check(engine::firstInvalidUtf8(story->text) == std::string::npos, "UTF-8 text");
    fuzz::check(engine::firstInvalidUtf8(story->title) == std::string::npos, "UTF-8 title");
    if (!unwrap)
        fuzz::check(words(story->text) + words(story->title) >= words(text) - 1 || words(text) == 0,
                    "without unwrapping, import keeps the words (a heading's # aside)");
    return 0;
}
