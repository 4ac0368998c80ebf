#include "loss_view.h"

#include "panel_util.h"
#include "story_editor.h"
#include "window_ruler.h"

#include <baton/engine/qt/model_jobs.h>
#include <baton/engine/scoring.h>

#include <QTextDocument>

#include <algorithm>
#include <cmath>

namespace baton::ui {

LossView::LossView(engine::ModelJobs& engine, StoryEditor& editor, WindowRuler& ruler,
                   QObject* parent)
    : QObject(parent)
    , m_engine(engine)
    , m_editor(editor)
    , m_ruler(ruler) {
    connect(m_editor.document(), &QTextDocument::contentsChanged, this, [this] {
        if (!m_text.isNull() && m_editor.storyText() != m_text)
            drop(tr("The text changed: Ctrl+L measures it again"));
    });
}

void LossView::measure(const QString& text, const engine::WindowSettings& windows) {
    if (m_job)
        m_engine.cancel(m_job);
    engine::EvaluateRequest req;
    req.text = text.toStdString();
    req.settings = {windows};
    req.keepPerToken = true;
    m_text = text;
    const quint64 ticket = ++m_ticket;
    m_job = m_engine.run<engine::TokenLosses>(
        this,
        [req](engine::JobContext& c) -> engine::Result<engine::TokenLosses> {
            auto model = c.requireModel();
            if (!model)
                return model.error();
            engine::TokenLosses losses;
            auto r = engine::evaluate(
                **model, req, [&](engine::EvaluationRow row) { losses = std::move(row.losses); },
                c.cancel(), c.progressReporter());
            if (!r)
                return r.error();
            return losses;
        },
        [this, ticket](const engine::TokenLosses& l) {
            if (ticket != m_ticket)
                return;
            m_job = 0;
            onTokenLosses(l.byteEnd, l.nll, l.windows.window, l.windows.overlap);
        },
        [this, ticket](const engine::Error& error) {
            if (ticket != m_ticket)
                return;
            m_job = 0;
            drop(QString());
            if (error.code != engine::ErrorCode::Cancelled)
                Q_EMIT failed(tr("The story could not be scored"), describeEngineError(error));
        });
    Q_EMIT statusMessage(tr("Scoring the story in windows…"), 0);
    Q_EMIT shownChanged(true);
}

void LossView::drop(const QString& why) {
    m_text = QString();
    if (m_job)
        m_engine.cancel(m_job);
    m_job = 0;
    ++m_ticket; // what the cancelled job still answers is not shown
    m_editor.clearLossRanges();
    m_ruler.setLoss({});
    if (!why.isEmpty())
        Q_EMIT statusMessage(why, 5000);
    Q_EMIT shownChanged(false);
}

void LossView::onTokenLosses(const std::vector<int64_t>& byteEnd, const std::vector<float>& nll,
                             int window, int overlap) {
    // Byte offsets of the UTF-8 text -> character positions in the editor.
    const std::vector<int> charAt = charIndexOfBytes(m_text);
    auto charOf = [&](int64_t byte) {
        return charAt[size_t(std::clamp<int64_t>(byte, 0, int64_t(charAt.size()) - 1))];
    };
    std::vector<StoryEditor::LossRange> ranges;
    ranges.reserve(byteEnd.size());
    int64_t begin = 0;
    for (size_t i = 0; i < byteEnd.size(); ++i) {
        ranges.push_back({charOf(begin), charOf(byteEnd[i]), nll[i]});
        begin = byteEnd[i];
    }
    m_editor.setLossRanges(ranges);
    std::vector<WindowRuler::Loss> losses;
    losses.reserve(ranges.size());
    for (const auto& r : ranges)
        losses.push_back({r.begin, r.end, r.nll});
    m_ruler.setLoss(losses);
    double total = 0;
    int scored = 0;
    for (float v : nll)
        if (v >= 0) {
            total += v;
            ++scored;
        }
    Q_EMIT statusMessage(tr("%1 tokens in windows of %2 (overlap %3): perplexity %4")
                             .arg(byteEnd.size())
                             .arg(window)
                             .arg(overlap)
                             .arg(scored ? std::exp(total / scored) : 0.0, 0, 'f', 2),
                         15000);
}

} // namespace baton::ui
