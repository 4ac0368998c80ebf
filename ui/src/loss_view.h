// The story's loss (Story > Show windows and loss): the story's text is scored in
// windows on the writing engine; the editor colours every token by its loss and the
// window ruler shades the story's windows by their tokens' mean loss. The colours go
// when the text changes.
#pragma once

#include "error_text.h"

#include <baton/engine/windows.h>

#include <QObject>
#include <QString>

#include <vector>

namespace baton::engine {
class ModelJobs;
}

namespace baton::ui {

class StoryEditor;
class WindowRuler;

class LossView : public QObject {
    Q_OBJECT
public:
    LossView(engine::ModelJobs& engine, StoryEditor& editor, WindowRuler& ruler,
             QObject* parent = nullptr);

    // Scores `text` (the editor's) in these windows, then shows the result.
    void measure(const QString& text, const engine::WindowSettings& windows);
    // Clears the colours and the ruler (which then shows `why`, or how to measure).
    void drop(const QString& why);
    bool measuring() const { return m_job != 0; }

Q_SIGNALS:
    void shownChanged(bool shown);
    void statusMessage(QString text, int milliseconds);
    void failed(QString what, baton::ui::ErrorText error);

private:
    void onTokenLosses(const std::vector<int64_t>& byteEnd, const std::vector<float>& nll,
                       int window, int overlap);

    engine::ModelJobs& m_engine;
    StoryEditor& m_editor;
    WindowRuler& m_ruler;
    quint64 m_job = 0;
    quint64 m_ticket = 0; // the measurement whose answer is shown
    QString m_text;       // the text the shown losses belong to
};

} // namespace baton::ui
