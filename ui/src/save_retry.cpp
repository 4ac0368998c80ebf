#include "save_retry.h"

#include <QTimer>

#include <algorithm>

namespace baton::ui {

SaveRetry::SaveRetry(QObject* parent, int firstDelayMs, int maxDelayMs)
    : QObject(parent)
    , m_timer(new QTimer(this))
    , m_first(firstDelayMs)
    , m_max(maxDelayMs) {
    m_timer->setSingleShot(true);
    connect(m_timer, &QTimer::timeout, this, &SaveRetry::retry);
}

bool SaveRetry::failed() {
    const bool first = m_delay == 0;
    m_delay = first ? m_first : std::min(m_max, m_delay * 2);
    m_timer->start(m_delay);
    return first;
}

void SaveRetry::succeeded() {
    m_delay = 0;
    m_timer->stop();
}

} // namespace baton::ui
