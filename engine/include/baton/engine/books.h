// Books as Baton reads them, for fine-tuning corpora and story import: plain text
// (.txt, .md) as UTF-8, and EPUB (.epub): the chapters of its spine in reading order,
// one paragraph per line with a blank line between, markup, scripts, styles and images
// left out. DRM-protected and broken EPUB files are refused with the reason.
#pragma once

#include "baton/engine/error.h"

#include <string>
#include <string_view>

namespace baton::engine {

struct Book {
    std::string title; // the EPUB's dc:title, else the file's name without extension
    std::string text;
    int chapters = 0; // EPUB: spine documents that held text; plain text: 1
};

// The extensions readBook() reads: .txt, .md, .markdown and .epub (any case).
bool isBookFile(std::string_view path);
bool isEpubFile(std::string_view path);

// An EPUB file. Errors: FileNotFound, FileUnreadable, BookDrm (encrypted content or
// Adobe rights), BookInvalid naming what is wrong (not a zip, no container, no package
// document, a missing or malformed chapter, no text at all, sizes over the limits).
Result<Book> readEpub(const std::string& path);

// Any book file: EPUB by its extension, else UTF-8 text (InvalidUtf8 with the offset).
// With unwrap, hard-wrapped plain text (Project Gutenberg's ~70 columns) is joined into
// paragraphs by unwrapText(); EPUB paragraphs are single lines already.
Result<Book> readBook(const std::string& path, bool unwrap);

} // namespace baton::engine
