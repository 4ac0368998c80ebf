// File > Import story: a book file (UTF-8 text, Markdown or a DRM-free EPUB) read off
// the GUI thread by the story module's importBook (the same as baton-cli story import:
// an EPUB's title and chapters, a Markdown heading as the title, hard-wrapped text
// joined into paragraphs), answered on the GUI thread.
#pragma once

#include "error_text.h"

#include <QObject>
#include <QString>

#include <string>

namespace baton::ui {

class StoryImporter : public QObject {
    Q_OBJECT
public:
    explicit StoryImporter(QObject* parent = nullptr);
    // Reads `path` on a worker thread; one import at a time (false while one runs).
    bool import(const QString& path);
    bool busy() const { return m_busy; }

Q_SIGNALS:
    void imported(QString title, std::string text, QString path);
    void failed(QString what, baton::ui::ErrorText error);

private:
    bool m_busy = false;
};

} // namespace baton::ui
