// Book files for the Fine-tune page's list, read by the engine's one book reader
// (engine/books.h: UTF-8 text as it is, a DRM-free EPUB's chapters in reading order,
// without markup; a library shard's works, .tar.xz, each a book), with the reason for
// each file refused. Slow for a large EPUB: the
// app calls it as a job off the GUI thread (LabBackend::readBooks).
#pragma once

#include <baton/storage/records.h>

#include <QStringList>

#include <vector>

namespace baton::ui {

struct BookFiles {
    std::vector<storage::Book> books; // title, text, source path and the file's SHA-256
    QStringList refused;              // "file name: why", one per file not read
};

// Files over this size are refused before they are read.
inline constexpr qint64 kMaxBookBytes = 256ll << 20;

BookFiles readBookFiles(const QStringList& paths);

} // namespace baton::ui
