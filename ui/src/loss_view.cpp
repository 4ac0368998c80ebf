#include "loss_view.h"

#include "story_editor.h"
#include "window_ruler.h"

#include <baton/engine/engine_controller.h>

#include <QTextDocument>

#include <algorithm>
#include <cmath>

namespace baton::ui {

LossView::LossView(engine::EngineController& engine, StoryEditor& editor, WindowRuler& ruler,
                   QObject* parent)
    : QObject(parent)
    , m_engine(engine)
    , m_editor(editor)
    , m_ruler(ruler) {
    connect(m_editor.document(), &QTextDocument::contentsChanged, this, [this] {
        if (!m_text.isNull() && m_editor.storyText() != m_text)
            drop(tr("The text changed: Ctrl+L measures it again"));
    });
    connect(&m_engine, &engine::EngineController::tokenLosses, this,
            [this](engine::JobId job, const engine::TokenLosses& l) {
                onTokenLosses(job, l.byteEnd, l.nll, l.windows.window, l.windows.overlap,
                              l.withState && m_engine.model() && m_engine.model()->recurrence);
            });
    connect(&m_engine, &engine::EngineController::jobFinished, this,
            [this](engine::JobId job, bool ok, const engine::Error& error) {
                if (job != m_job || ok)
                    return;
                drop(QString());
                if (error.code != engine::ErrorCode::Cancelled)
                    Q_EMIT failed(tr("The story could not be scored"), describeEngineError(error));
            });
}

void LossView::measure(const QString& text, const engine::WindowSettings& windows) {
    engine::EvaluateRequest req;
    req.text = text.toStdString();
    req.settings = {windows};
    req.keepPerToken = true;
    m_text = text;
    m_job = m_engine.evaluate(req);
    m_ruler.clear(tr("Scoring the story in windows…"));
    Q_EMIT shownChanged(true);
}

void LossView::drop(const QString& why) {
    m_text = QString();
    if (m_job)
        m_engine.cancel(m_job);
    m_job = 0;
    m_editor.clearLossRanges();
    m_ruler.clear(why.isEmpty() ? tr("Window ruler: Story > Show windows and loss (Ctrl+L)") : why);
    Q_EMIT shownChanged(false);
}

void LossView::onTokenLosses(quint64 job, const std::vector<int64_t>& byteEnd,
                             const std::vector<float>& nll, int window, int overlap, bool state) {
    if (job != m_job)
        return;
    m_job = 0;
    // Byte offsets of the UTF-8 text -> character positions in the editor.
    const QString& text = m_text;
    std::vector<int> charAt; // charAt[b] = the character that byte b starts
    charAt.reserve(size_t(text.size()) * 2 + 1);
    for (int i = 0; i < text.size(); ++i) {
        const char32_t c = text.at(i).unicode();
        int bytes = c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
        if (text.at(i).isHighSurrogate() && i + 1 < text.size()) {
            bytes = 4;
            charAt.insert(charAt.end(), size_t(bytes), i);
            ++i;
            continue;
        }
        charAt.insert(charAt.end(), size_t(bytes), i);
    }
    charAt.push_back(int(text.size()));
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
    std::vector<RulerWindow> windows;
    const engine::WindowSettings ws{window, overlap};
    for (const engine::WindowSpan& span : engine::planWindows(int64_t(byteEnd.size()), ws)) {
        RulerWindow w;
        w.firstToken = span.start;
        w.lastToken = span.start + span.length - 1;
        w.overlap = span.index > 0 ? int(std::min<int64_t>(overlap, span.length)) : 0;
        double sum = 0;
        int n = 0;
        for (int64_t t = span.firstScored; t <= span.lastScored && t < int64_t(nll.size()); ++t)
            if (nll[size_t(t)] >= 0) {
                sum += nll[size_t(t)];
                ++n;
            }
        w.meanLoss = n ? sum / n : 0;
        w.startChar = span.start > 0 ? charOf(byteEnd[size_t(span.start - 1)]) : 0;
        windows.push_back(w);
    }
    m_ruler.setWindows(std::move(windows), int64_t(byteEnd.size()), state);
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
