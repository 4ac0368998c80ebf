// The story's memory (background the model reads at the start of every window, or
// once before the story: the cast, the setting, the premise) and the author's note
// (guidance placed whole just before the continuation in every window the model writes
// in: tone, what should happen next), with what they and world info cost of every
// window, shown up front. Changes are reported after a short pause in typing (and at
// once by flush()).
#pragma once

#include <baton/story/context.h>

#include <QWidget>

class QLabel;
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
    // What the memory, the note and world info cost of every window (the context
    // view's figures); nullptr clears it.
    void setWindowCost(const story::ContextView* view);
    QString costText() const;

Q_SIGNALS:
    void notesChanged(QString memory, QString authorsNote);

private:
    QPlainTextEdit* m_memory = nullptr;
    QPlainTextEdit* m_note = nullptr;
    QLabel* m_cost = nullptr;
    QTimer* m_timer = nullptr;
    bool m_loading = false;
};

} // namespace baton::ui
