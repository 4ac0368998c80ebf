#include "baton/engine/generation_stream.h"

namespace baton::engine {

GenerationStream::GenerationStream(JobContext& context,
                                   std::function<void(GenerationProgress)> report)
    : m_context(context)
    , m_report(std::move(report))
    , m_start(std::chrono::steady_clock::now()) {}

bool GenerationStream::onEvent(const GenerationEvent& e) {
    m_pending.text += e.text;
    m_last = e;
    if (e.token >= 0 && m_context.due())
        flush();
    return true;
}

void GenerationStream::finish() {
    if (!m_pending.text.empty())
        flush();
}

void GenerationStream::flush() {
    m_pending.generated = m_last.generated;
    m_pending.streamLength = m_last.streamLength;
    m_pending.windowFill = m_last.windowFill;
    m_pending.windowIndex = m_last.windowIndex;
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    m_pending.tokensPerSecond = s > 0 ? double(m_last.generated) / s : 0.0;
    if (m_report)
        m_report(m_pending);
    m_pending.text.clear();
}

} // namespace baton::engine
