#include "story_importer.h"

#include <baton/story/import.h>

#include <QFileInfo>

namespace baton::ui {

StoryImporter::StoryImporter(engine::ModelJobs& jobs, QObject* parent)
    : QObject(parent)
    , m_jobs(jobs) {}

bool StoryImporter::import(const QString& path) {
    if (m_busy)
        return false;
    m_busy = true;
    // A story's error is the job's value: it is shown as the story layer words it.
    using Read = story::Result<story::ImportedStory>;
    m_jobs.run<Read>(
        this,
        [path](engine::JobContext&) -> engine::Result<Read> {
            return Read(story::importBook(path.toStdString(), /*unwrap=*/true));
        },
        [this, path](Read read) {
            m_busy = false;
            const QString name = QFileInfo(path).fileName();
            if (!read) {
                const story::Error& e = read.error();
                Q_EMIT failed(tr("%1 could not be imported").arg(name),
                              e.engine ? describeEngineError(*e.engine)
                                       : ErrorText{QString::fromStdString(e.message), {}});
            } else if (QString::fromStdString(read->text).trimmed().isEmpty()) {
                Q_EMIT failed(tr("%1 could not be imported").arg(name),
                              {tr("The file holds no text."), {}});
            } else {
                Q_EMIT imported(QString::fromStdString(read->title), std::move(read->text), path);
            }
        },
        [this, path](const engine::Error& error) {
            m_busy = false;
            Q_EMIT failed(tr("%1 could not be imported").arg(QFileInfo(path).fileName()),
                          describeEngineError(error));
        });
    return true;
}

} // namespace baton::ui
