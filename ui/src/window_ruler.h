// The window ruler: a strip along the story (left = its start, right = its end)
// showing the windows the model has read it in, as the context view lays them out (the
// one source the status bar and the Context dock show too): where each window begins,
// which one is open and how full it is, and where a recurrent model carries its state
// forward (a mark at each window start). With the loss measured (Story > Show windows
// and loss) each window is shaded by the mean loss of its tokens. Clicking a window
// asks to show its start.
#pragma once

#include <QString>
#include <QWidget>

#include <vector>

namespace baton::ui {

struct RulerWindow {
    int startChar = 0, endChar = 0; // the story's characters it reads [start, end)
    double meanLoss = -1;           // nats per token; < 0: not measured
};

class WindowRuler : public QWidget {
    Q_OBJECT
public:
    explicit WindowRuler(QWidget* parent = nullptr);

    // The story's windows: where each begins (characters, the open one last), the
    // story's length, and the open window's positions in use of its size T.
    void setStoryWindows(const std::vector<int>& startChars, int textChars, int used, int size,
                         bool carriesState);
    // Per-character-range losses (a token's characters and its loss in nats), averaged
    // into the windows; an empty list takes the shading away.
    struct Loss {
        int begin = 0, end = 0;
        float nll = 0;
    };
    void setLoss(const std::vector<Loss>& losses);
    // No story, or no view of it: the hint instead.
    void clear(const QString& hint);

    const std::vector<RulerWindow>& windows() const { return m_windows; }
    // "Window 13 · 36 of 128 in use" (the status bar says the same).
    QString caption() const;
    bool hasLoss() const { return !m_losses.empty(); }
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

Q_SIGNALS:
    void windowClicked(int startChar);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    bool event(QEvent* event) override;

private:
    void shade();
    int windowAt(int x) const;
    std::vector<RulerWindow> m_windows;
    std::vector<Loss> m_losses;
    int m_chars = 0;
    int m_used = 0, m_size = 0;
    bool m_state = false;
    QString m_hint;
};

// The caption of an open window: "Window 13 · 36 of 128 in use" (index from 0).
QString windowCaption(qint64 index, int used, int size);

} // namespace baton::ui
