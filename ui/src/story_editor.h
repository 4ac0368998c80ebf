// The story's text: every saved passage (user text and model text in distinct
// colours) followed by what the user is typing. Saved text is protected (this slice
// has no editing in place): typing anywhere moves to the end, deletion stops at the
// saved text, and only the typed tail is plain editable text. Long-form typography:
// a serif face, generous line height, and a column of at most about 42 em centred
// in the view.
#pragma once

#include <baton/storage/records.h>

#include <QTextCharFormat>
#include <QTextEdit>

#include <string>
#include <vector>

namespace baton::ui {

// The text a passage shows in the editor (line breaks normalised to \n): its
// length is what the editor counts.
QString toDisplayText(const std::string& text);

class StoryEditor : public QTextEdit {
    Q_OBJECT
public:
    explicit StoryEditor(QWidget* parent = nullptr);

    // Replaces everything with these passages (nothing typed).
    void setPassages(const std::vector<storage::Passage>& path);
    void clearStory();
    // Adds saved text after the saved text (before anything typed).
    void appendSaved(const QString& text, storage::PassageAuthor author);
    // The text typed after the saved text.
    QString typedText() const;
    // Marks the typed text as saved user text; returns it.
    QString commitTypedText();
    // Removes everything from this character on (saved and typed).
    void truncate(int savedChars);
    int savedLength() const { return m_saved; }
    // Who wrote the character at pos (for tests and tooltips).
    storage::PassageAuthor authorAt(int pos) const;

    QColor userColor() const { return m_userFormat.foreground().color(); }
    QColor modelColor() const { return m_modelFormat.foreground().color(); }
    // Colours character ranges [begin, end) by a loss in nats (a background from pale
    // to red, under the author colours); the text is not changed.
    struct LossRange {
        int begin = 0, end = 0;
        float nll = 0;
    };
    void setLossRanges(const std::vector<LossRange>& ranges);
    void clearLossRanges();
    int lossRangeCount() const { return int(extraSelections().size()); }

Q_SIGNALS:
    // The typed text changed (empty or not).
    void typedTextChanged();
    // Something changed the saved text by a path this editor does not allow (a
    // defence): the owner reloads the story to show what is saved.
    void savedTextDamaged();

protected:
    void keyPressEvent(QKeyEvent* event) override;
    void inputMethodEvent(QInputMethodEvent* event) override;
    bool canInsertFromMimeData(const QMimeData* source) const override;
    void insertFromMimeData(const QMimeData* source) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void insertAt(int pos, const QString& text, const QTextCharFormat& format);
    void updateColumn();
    bool cursorInSaved() const;
    void moveToEnd();
    int documentLength() const;
    void onContentsChange(int position, int removed, int added);

    QTextCharFormat m_userFormat, m_modelFormat;
    QTextBlockFormat m_blockFormat;
    int m_saved = 0;         // characters of saved text at the start of the document
    bool m_internal = false; // the editor itself is changing the document
    QString m_lastTyped;
};

} // namespace baton::ui
