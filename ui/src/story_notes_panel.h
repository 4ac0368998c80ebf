// The story's memory (background the model reads before the story, always: the
// cast, the setting, the premise) and author's note (guidance read just before
// each generation: tone, what should happen next). Changes are reported after a
// short pause in typing (and at once by flush()).
#pragma once

#include <QWidget>

class QPlainTextEdit;
class QTimer;

namespace baton::ui {

class StoryNotesPanel : public QWidget {
    Q_OBJECT
public:
    explicit StoryNotesPanel(QWidget* parent = nullptr);

    // Shows a story's notes (reports nothing).
    void setNotes(const QString& memory, const QString& authorsNote);
    QString memory() const;
    QString authorsNote() const;
    // Reports a pending change now.
    void flush();

Q_SIGNALS:
    void notesChanged(QString memory, QString authorsNote);

private:
    QPlainTextEdit* m_memory = nullptr;
    QPlainTextEdit* m_note = nullptr;
    QTimer* m_timer = nullptr;
    bool m_loading = false;
};

} // namespace baton::ui
