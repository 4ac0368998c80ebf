// EPUB books: the whole file through readEpub (zip container, container.xml, the
// package document, the spine, each chapter's XHTML) when the first byte is even, and
// one chapter's XHTML through xhtmlParagraphs when it is odd (reached much more often
// that way than through a zip). Errors say what is wrong; accepted text is UTF-8.
#include "fuzz_support.h"

#include "books/xhtml_text.h"

#include <baton/engine/books.h>
#include <baton/engine/text.h>

using namespace baton;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0)
        return 0;
    const std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
    if (data[0] & 1) {
        auto paragraphs = engine::books::xhtmlParagraphs(bytes, "chapter.xhtml");
        if (!paragraphs) {
            fuzz::check(!paragraphs.error().message.empty(), "an error says what is wrong");
            return 0;
        }
        for (const auto& p : *paragraphs)
            fuzz::check(engine::firstInvalidUtf8(p) == std::string::npos, "UTF-8 paragraphs");
        return 0;
    }
    auto book = engine::readEpub(fuzz::writeScratch("book.epub", bytes));
    if (!book) {
        fuzz::check(!book.error().message.empty(), "an error says what is wrong");
        return 0;
    }
    fuzz::check(engine::firstInvalidUtf8(book->text) == std::string::npos, "UTF-8 text");
    fuzz::check(engine::firstInvalidUtf8(book->title) == std::string::npos, "UTF-8 title");
    fuzz::check(book->chapters > 0 && !book->text.empty(), "an accepted book has text");
    return 0;
}
