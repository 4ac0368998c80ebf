// Books as Baton reads them, for fine-tuning corpora and story import: plain text
// (.txt, .md) as UTF-8, and EPUB (.epub): the chapters of its spine in reading order,
// one paragraph per line with a blank line between, markup, scripts, styles and images
// left out. DRM-protected and broken EPUB files are refused with the reason.
#pragma once

#include "baton/engine/cancel.h"
#include "baton/engine/error.h"

#include <functional>
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

// A library shard: a tar archive of works, plain (.tar) or compressed with xz (.tar.xz,
// .txz), as Baton's training library ships (one plain-text or Markdown file per work).
bool isLibraryShard(std::string_view path);

// The largest work a shard may hold; a bigger member is refused, not read.
constexpr size_t kMostLibraryWorkBytes = size_t(256) << 20;

// Streams the works of a shard, one at a time in archive order, without unpacking it:
// each member with a text extension (.txt, .md, .markdown) as a Book titled
// "SHARD/MEMBER" (the shard's file name, then the member's path), other members
// skipped, the text as it is (unwrapText() joins hard-wrapped lines where wanted).
// onWork may return false to stop. progress gets the share of the shard read.
// Errors: FileNotFound, FileUnreadable; BookInvalid naming the shard for a truncated
// archive, damaged compressed data, a header that fails its checksum or a member over
// kMostLibraryWorkBytes; InvalidUtf8 naming the work; Cancelled.
Result<void> readLibraryShard(const std::string& path, const std::function<bool(Book&&)>& onWork,
                              const CancelToken& cancel = {},
                              const std::function<void(double)>& progress = {});

} // namespace baton::engine
