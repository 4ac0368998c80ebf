// File > Import story: a book file (UTF-8 text, Markdown or a DRM-free EPUB) read by
// the story module's importBook (the same as baton-cli story import: an EPUB's title
// and chapters, a Markdown heading as the title, hard-wrapped text joined into
// paragraphs), as a job on the writing model's queue (off the GUI thread; between
// continuations), answered on the GUI thread.
#pragma once

#include "error_text.h"

#include <baton/engine/qt/model_jobs.h>

#include <QObject>
#include <QString>

#include <string>

namespace baton::ui {

class StoryImporter : public QObject {
    Q_OBJECT
public:
    explicit StoryImporter(engine::ModelJobs& jobs, QObject* parent = nullptr);
    // Reads `path`; one import at a time (false while one runs).
    bool import(const QString& path);
    bool busy() const { return m_busy; }

Q_SIGNALS:
    void imported(QString title, std::string text, QString path);
    void failed(QString what, baton::ui::ErrorText error);

private:
    engine::ModelJobs& m_jobs;
    bool m_busy = false;
};

} // namespace baton::ui
