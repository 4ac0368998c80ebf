#include "book_files.h"

#include "model_catalog.h"

#include <baton/engine/books.h>

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <iterator>

namespace baton::ui {

namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("baton::ui::BookFiles", text);
}

// A library shard's works, each a book: titled by its file name without the extension,
// its source the shard's path and the member's, its checksum that of its text.
void readShard(const QFileInfo& info, BookFiles& out, const engine::CancelToken& cancel,
               const std::function<void(double)>& progress) {
    std::vector<storage::Book> works;
    QStringList empty;
    auto read = engine::readLibraryShard(
        info.absoluteFilePath().toStdString(),
        [&](engine::Book&& work) {
            const QString member =
                QString::fromStdString(work.title.substr(work.title.find('/') + 1));
            if (QString::fromStdString(work.text).trimmed().isEmpty()) {
                empty << member;
                return true;
            }
            storage::Book b;
            b.title = QFileInfo(member).completeBaseName().toStdString();
            b.sourcePath = (info.absoluteFilePath() + "/" + member).toStdString();
            b.checksum = QCryptographicHash::hash(QByteArray::fromStdString(work.text),
                                                  QCryptographicHash::Sha256)
                             .toHex()
                             .toStdString();
            b.text = std::move(work.text);
            works.push_back(std::move(b));
            return true;
        },
        cancel, progress);
    if (!read && read.error().code == engine::ErrorCode::Cancelled) {
        out.cancelled = true;
        return;
    }
    if (!read) {
        out.refused << tr("%1: %2").arg(info.fileName(),
                                        QString::fromStdString(read.error().message));
        return;
    }
    for (const QString& member : empty)
        out.refused << tr("%1: %2 is empty").arg(info.fileName(), member);
    if (works.empty() && empty.isEmpty())
        out.refused << tr("%1: holds no .txt or .md work").arg(info.fileName());
    std::move(works.begin(), works.end(), std::back_inserter(out.books));
}

} // namespace

BookFiles readBookFiles(const QStringList& paths, const engine::CancelToken& cancel,
                        const BookProgress& progress) {
    BookFiles out;
    // Progress by bytes: each file's share is its size in the whole.
    double total = 0, before = 0;
    for (const QString& path : paths)
        total += double(std::max<qint64>(QFileInfo(path).size(), 1));
    for (const QString& path : paths) {
        const QFileInfo info(path);
        const QString name = info.fileName();
        const double size = double(std::max<qint64>(info.size(), 1)), start = before;
        before += size;
        auto within = [&progress, &name, start, size, total](double share) {
            if (progress)
                progress((start + share * size) / total, name);
        };
        within(0);
        if (cancel.cancelled())
            out.cancelled = true;
        if (out.cancelled)
            break;
        if (info.exists() && info.size() > kMaxBookBytes) {
            out.refused << tr("%1: larger than %2").arg(name, formatBytes(kMaxBookBytes));
            continue;
        }
        if (engine::isLibraryShard(path.toStdString()) && info.exists()) {
            readShard(info, out, cancel, within);
            if (out.cancelled)
                break;
            continue;
        }
        auto book = engine::readBook(path.toStdString(), /*unwrap=*/false);
        if (!book) {
            out.refused << tr("%1: %2").arg(name, QString::fromStdString(book.error().message));
            continue;
        }
        if (QString::fromStdString(book->text).trimmed().isEmpty()) {
            out.refused << tr("%1: empty").arg(name);
            continue;
        }
        QFile file(path);
        QCryptographicHash hash(QCryptographicHash::Sha256);
        if (!file.open(QIODevice::ReadOnly) || !hash.addData(&file)) {
            out.refused << tr("%1: %2").arg(name, file.errorString());
            continue;
        }
        storage::Book b;
        b.title = book->title;
        b.text = std::move(book->text);
        b.sourcePath = info.absoluteFilePath().toStdString();
        b.checksum = hash.result().toHex().toStdString();
        out.books.push_back(std::move(b));
    }
    if (out.cancelled)
        out.books.clear();
    else if (progress)
        progress(1.0, QString());
    return out;
}

} // namespace baton::ui
