// The story's text: every saved passage (user text and model text in distinct
// colours) followed by what the user is typing. Saved text can be edited anywhere
// (what is typed there is the user's, in the user's colour), and pendingEdits() gives
// the passages whose text changed, found by a diff of the saved text as shown and as
// it is now (story/edit.h), for the owner to save (which drops the saved states from
// the first changed passage on). The document's own
// undo covers the typing since the last save or generation; Undo beyond that is
// the story's (storyUndoRequested). Long-form typography: a serif face, generous
// line height, and a column of at most about 42 em centred in the view.
#pragma once

#include <baton/storage/records.h>
#include <baton/story/edit.h>

#include <QTextCharFormat>
#include <QTextEdit>

#include <map>
#include <string>
#include <vector>

namespace baton::ui {

// The text a passage shows in the editor (line breaks, \r\n, \r, U+2028 and U+2029,
// normalised to \n): its length is what the editor counts.
QString toDisplayText(const std::string& text);
// The shown length of the first `count` passages of a path.
int displayLength(const std::vector<storage::Passage>& path, size_t count);

class StoryEditor : public QTextEdit {
    Q_OBJECT
public:
    explicit StoryEditor(QWidget* parent = nullptr);

    // Replaces everything with these passages (nothing typed).
    void setPassages(const std::vector<storage::Passage>& path);
    // Shows this path and keeps what is typed after it: when the saved text is the
    // same (streamed text now saved) only the passage ids are attached, so the view
    // and the cursor stay; otherwise the saved text is replaced.
    void showPath(const std::vector<storage::Passage>& path);
    void clearStory();
    // Adds saved text after the saved text (before anything typed).
    void appendSaved(const QString& text, storage::PassageAuthor author);
    // The whole text as the story holds it: toPlainText() turns no-break spaces into
    // spaces, this does not (line breaks are \n).
    QString storyText() const;
    // The text typed after the saved text.
    QString typedText() const;
    // Adds to the typed text (an adventure turn, framed for the model).
    void appendTyped(const QString& text);
    // Puts text back at the start of the typed text (a save that failed: it was marked
    // saved by commitTypedText, and the path shown since does not hold it).
    void restoreTyped(const QString& text);
    // Marks the typed text as saved user text; returns it.
    QString commitTypedText();
    // Removes everything from this character on (saved and typed).
    void truncate(int savedChars);
    int savedLength() const { return m_saved; }
    // Who wrote the character at pos (for tests and tooltips).
    storage::PassageAuthor authorAt(int pos) const;
    // The passage the character at pos belongs to (0: typed, or not yet saved).
    qint64 passageAt(int pos) const;
    // Where a shown passage's text begins (-1: not shown).
    int passageStart(qint64 passageId) const;
    // Asks for the token alternatives of the generated text at pos (what Ctrl+click and
    // the context menu's "Token Alternatives" do): false, and nothing asked, unless pos
    // is in saved model text and no edit of saved text is pending.
    bool requestAlternatives(int pos, const QPoint& globalPos);

    // Saved text the user changed and the owner has not saved yet: one entry per
    // changed passage, in story order (a passage whose text was all deleted has an
    // empty `after`).
    std::vector<story::PassageEdit> pendingEdits() const;
    bool hasPendingEdits() const { return m_edited; }
    // The pending edits were saved: they become the saved text.
    void acceptEdits();

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
    // Blank lines shown as paragraph gaps (hidden empty blocks), for tests.
    int collapsedBlankLines() const;

Q_SIGNALS:
    // The typed text changed (empty or not).
    void typedTextChanged();
    // The user changed saved text (pendingEdits() is not empty).
    void savedTextEdited();
    // Undo / Redo with nothing left in the document's own undo stack: the story's.
    void storyUndoRequested();
    void storyRedoRequested();
    // The token alternatives at character `offset` of a saved passage's text (as shown),
    // for a menu at globalPos.
    void alternativesRequested(qint64 passageId, int offset, QPoint globalPos);

protected:
    void keyPressEvent(QKeyEvent* event) override;
    void inputMethodEvent(QInputMethodEvent* event) override;
    bool canInsertFromMimeData(const QMimeData* source) const override;
    void insertFromMimeData(const QMimeData* source) override;
    void resizeEvent(QResizeEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;

private:
    void insertAt(int pos, const QString& text, const QTextCharFormat& format);
    // The format of text the user types at `pos`: the user's, in the passage there.
    QTextCharFormat typingFormat(int pos) const;
    void updateColumn();
    // The character under a point of the viewport (the nearest boundary's side of it).
    int charAt(const QPoint& point) const;
    void moveToEnd();
    int documentLength() const;
    void onContentsChange(int position, int removed, int added);
    // After the editor changed the document itself: the document's undo starts anew.
    void endInternalChange();
    // Hides the empty blocks that follow a paragraph (a run of blank lines is one gap),
    // all but the last block; shows the others.
    void collapseBlankLines();

    QTextCharFormat m_userFormat, m_modelFormat;
    QTextBlockFormat m_blockFormat;
    int m_saved = 0;         // characters of saved text at the start of the document
    bool m_internal = false; // the editor itself is changing the document
    QString m_lastTyped;
    bool m_edited = false;                  // saved text changed since the last save
    std::vector<qint64> m_order;            // the passages shown, in story order
    std::map<qint64, QString> m_savedTexts; // their saved (display) texts
};

} // namespace baton::ui
