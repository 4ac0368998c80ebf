// Saving typed text again after a save failed (a full disk, an I/O error): the text
// stays in the editor, and the next attempt comes after 5 s, then after twice as long
// each time the disk is still full, up to a minute. The user hears about the first
// failure of a streak in a message box, then in the status bar only.
#pragma once

#include <QObject>

class QTimer;

namespace baton::ui {

class SaveRetry : public QObject {
    Q_OBJECT
public:
    explicit SaveRetry(QObject* parent = nullptr, int firstDelayMs = 5000, int maxDelayMs = 60000);

    // A save failed: schedules the next attempt. True when it begins a streak.
    bool failed();
    // A save went in: the streak ends, nothing is scheduled.
    void succeeded();
    // The delay before the attempt that failed() scheduled; 0 outside a streak.
    int delayMs() const { return m_delay; }

Q_SIGNALS:
    void retry();

private:
    QTimer* m_timer = nullptr;
    int m_first, m_max, m_delay = 0;
};

} // namespace baton::ui
