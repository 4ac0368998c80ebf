#include "book_files.h"

#include "model_catalog.h"

#include <baton/engine/books.h>

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QFile>
#include <QFileInfo>

namespace baton::ui {

namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("baton::ui::BookFiles", text);
}

} // namespace

BookFiles readBookFiles(const QStringList& paths) {
    BookFiles out;
    for (const QString& path : paths) {
        const QFileInfo info(path);
        const QString name = info.fileName();
        if (info.exists() && info.size() > kMaxBookBytes) {
            out.refused << tr("%1: larger than %2").arg(name, formatBytes(kMaxBookBytes));
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
    return out;
}

} // namespace baton::ui
