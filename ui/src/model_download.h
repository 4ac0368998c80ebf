// A model downloaded from the Hugging Face Hub (hub::pull) on a thread of its own: the
// Models page starts it, shows its progress (at most ten times a second, on the GUI
// thread) and can cancel it; what came stays for the next download of that model,
// which resumes it.
#pragma once

#include <baton/engine/cancel.h>

#include <QObject>
#include <QString>

#include <atomic>
#include <thread>

namespace baton::ui {

class ModelDownload : public QObject {
    Q_OBJECT
public:
    explicit ModelDownload(QObject* parent = nullptr);
    ~ModelDownload() override; // cancels a running download and waits for it

    // Starts downloading repo ("owner/name[@revision]") into destination; false (and
    // failed) when the id cannot be one, or one is running.
    bool start(const QString& repo, const QString& destination);
    void cancel();
    bool running() const { return m_running; }

Q_SIGNALS:
    void progress(QString file, qint64 done, qint64 total, double bytesPerSecond,
                  double secondsLeft);
    // The model folder, every file checked.
    void finished(QString folder, bool alreadyThere);
    void failed(QString message, bool cancelled);

private:
    void join();

    std::thread m_thread;
    engine::CancelToken m_cancel;
    bool m_running = false;
};

} // namespace baton::ui
