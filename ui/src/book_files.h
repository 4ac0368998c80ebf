// Book files for the Fine-tune page's list, read by the engine's one book reader
// (engine/books.h: UTF-8 text as it is, a DRM-free EPUB's chapters in reading order,
// without markup; a library shard's works, .tar.xz, each a book), with the reason for
// each file refused. Slow for a large EPUB or a shard: the app calls it as a job off
// the GUI thread (LabBackend::readBooks), with progress and Cancel.
#pragma once

#include <baton/engine/cancel.h>
#include <baton/storage/records.h>

#include <QStringList>

#include <functional>
#include <vector>

namespace baton::ui {

struct BookFiles {
    std::vector<storage::Book> books; // title, text, source path and the file's SHA-256
    QStringList refused;              // "file name: why", one per file not read
    bool cancelled = false;           // stopped part-way: add none of it
};

// The share of the files' bytes read so far, and the file being read.
using BookProgress = std::function<void(double fraction, const QString& file)>;

// Files over this size are refused before they are read.
inline constexpr qint64 kMaxBookBytes = 256ll << 20;

// Stops at the next work or file once `cancel` is set (cancelled, books dropped).
BookFiles readBookFiles(const QStringList& paths, const engine::CancelToken& cancel = {},
                        const BookProgress& progress = {});

} // namespace baton::ui
