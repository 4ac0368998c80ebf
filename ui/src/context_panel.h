// The context viewer (a dock): what the model reads when the story is continued next,
// as the story module lays it out (story/context.h, the plan a continuation runs): a
// bar of the window's T positions (the memory, the story text, the overlap carried from
// the previous window, world info, the author's note, and the room left before the
// window rolls over), where the recurrent state comes from, the stretches with their
// token counts and text, and which world-info entries fired.
#pragma once

#include <baton/story/context.h>

#include <QWidget>

#include <optional>

class QLabel;
class QPlainTextEdit;
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

private:
    void showSpanText();

    std::optional<story::ContextView> m_view;
    QLabel* m_summary;
    ContextBar* m_bar;
    QTreeWidget* m_spans;
    QPlainTextEdit* m_text;
    QLabel* m_lore;
};

} // namespace baton::ui
