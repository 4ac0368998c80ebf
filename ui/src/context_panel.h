// The context viewer (a dock): what the model reads when the story is continued next,
// as the story module lays it out (story/context.h, the plan a continuation runs): a
// bar of the window's T positions (the memory, the story text, the overlap carried from
// the previous window, world info, the author's note, and the room left before the
// window rolls over), where the recurrent state comes from, the stretches with their
// token counts and text, which world-info entries fired, and what was recalled from the
// story's past (each excerpt with its window and the words that matched; the writer can
// go to it, pin it into the memory or ban it from recall).
#pragma once

#include <baton/story/context.h>

#include <QWidget>

#include <optional>

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTreeWidget;

namespace baton::ui {

class ContextBar;

class ContextPanel : public QWidget {
    Q_OBJECT
public:
    explicit ContextPanel(QWidget* parent = nullptr);

    void showView(const story::ContextView& view);
    // Instead of a view: why there is none (no story, no model, an error).
    void showMessage(const QString& text);
    const std::optional<story::ContextView>& view() const { return m_view; }

    // The colour a stretch of this kind is drawn in (the bar and the table agree).
    static QColor kindColour(story::SegmentKind kind, bool overlap);

Q_SIGNALS:
    // The selected recalled excerpt: show it in the story (bytes of the path's text),
    // add it to the memory, or never recall its chunk again.
    void recallShowRequested(qint64 start, qint64 end);
    void recallPinRequested(QString text);
    void recallBanRequested(qint64 passageId, qint64 chunkStart);

private:
    void showSpanText();
    void showRecall();
    const story::RecalledChunk* selectedRecall() const;

    std::optional<story::ContextView> m_view;
    QLabel* m_summary;
    ContextBar* m_bar;
    QTreeWidget* m_spans;
    QPlainTextEdit* m_text;
    QLabel* m_lore;
    QWidget* m_recallBox;
    QTreeWidget* m_recall;
    QPushButton* m_recallShow;
    QPushButton* m_recallPin;
    QPushButton* m_recallBan;
};

} // namespace baton::ui
