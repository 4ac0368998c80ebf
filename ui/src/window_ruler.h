// The window ruler: a strip along the story (left = its start, right = its end)
// showing each window of T tokens, the overlap it shares with the one before, and
// where a recurrent model carries its state forward (a mark at each window start),
// with the mean loss per window as the bar's shade when the loss is known. Clicking a
// window asks to show its start. Fed by the engine's per-token losses.
#pragma once

#include <baton/engine/engine_controller.h>

#include <QString>
#include <QWidget>

#include <vector>

namespace baton::ui {

struct RulerWindow {
    int64_t firstToken = 0, lastToken = 0; // inclusive
    int overlap = 0;                       // tokens shared with the previous window
    double meanLoss = 0;                   // nats per scored token
    int startChar = 0;                     // where the window starts in the text
};

class WindowRuler : public QWidget {
    Q_OBJECT
public:
    explicit WindowRuler(QWidget* parent = nullptr);

    // The windows of a text of `tokens` tokens; charStart maps token -> character.
    void setWindows(std::vector<RulerWindow> windows, int64_t tokens, bool carriesState);
    void clear(const QString& hint);
    const std::vector<RulerWindow>& windows() const { return m_windows; }
    QSize sizeHint() const override;

Q_SIGNALS:
    void windowClicked(int startChar);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    bool event(QEvent* event) override;

private:
    int windowAt(int x) const;
    std::vector<RulerWindow> m_windows;
    int64_t m_tokens = 0;
    bool m_state = false;
    QString m_hint;
};

} // namespace baton::ui
