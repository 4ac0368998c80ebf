// The story's memory (background the model reads at the start of every window, or
// once before the story: the cast, the setting, the premise) with what it costs, and
// the author's note (guidance read just before each generation: tone, what should
// happen next). Changes are reported after a short pause in typing (and at once by
// flush()).
#pragma once

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
    // What the memory costs (from the context view): its tokens in every window of T,
    // or once; window 0 clears it.
    void setMemoryCost(bool everyWindow, int memoryTokens, int pinnedTokens, int window);

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
