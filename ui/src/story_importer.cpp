#include "story_importer.h"

#include <baton/story/import.h>

#include <QCoreApplication>
#include <QFileInfo>
#include <QPointer>
#include <QThread>

namespace baton::ui {

StoryImporter::StoryImporter(QObject* parent)
    : QObject(parent) {}

bool StoryImporter::import(const QString& path) {
    if (m_busy)
        return false;
    m_busy = true;
    QPointer<StoryImporter> self(this);
    QThread* thread = QThread::create([self, path] {
        auto read = story::importBook(path.toStdString(), /*unwrap=*/true);
        QMetaObject::invokeMethod(
            qApp,
            [self, path, read = std::move(read)]() mutable {
                if (!self)
                    return;
                self->m_busy = false;
                const QString name = QFileInfo(path).fileName();
                if (!read) {
                    const story::Error& e = read.error();
                    Q_EMIT self->failed(tr("%1 could not be imported").arg(name),
                                        e.engine
                                            ? describeEngineError(*e.engine)
                                            : ErrorText{QString::fromStdString(e.message), {}});
                } else if (QString::fromStdString(read->text).trimmed().isEmpty()) {
                    Q_EMIT self->failed(tr("%1 could not be imported").arg(name),
                                        {tr("The file holds no text."), {}});
                } else {
                    Q_EMIT self->imported(QString::fromStdString(read->title),
                                          std::move(read->text), path);
                }
            },
            Qt::QueuedConnection);
    });
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
    return true;
}

} // namespace baton::ui
