#include "model_download.h"

#include <baton/hub/hub.h>

#include <QMetaObject>
#include <QPointer>

#include <chrono>

namespace baton::ui {

ModelDownload::ModelDownload(QObject* parent)
    : QObject(parent) {}

ModelDownload::~ModelDownload() {
    m_cancel.cancel();
    join();
}

void ModelDownload::join() {
    if (m_thread.joinable())
        m_thread.join();
}

void ModelDownload::cancel() {
    m_cancel.cancel();
}

bool ModelDownload::start(const QString& repo, const QString& destination) {
    if (m_running)
        return false;
    auto ref = hub::parseRepoRef(repo.trimmed().toStdString());
    if (!ref) {
        Q_EMIT failed(QString::fromStdString(ref.error().message), false);
        return false;
    }
    join(); // the last one has ended: it reported before its thread returned
    m_cancel = engine::CancelToken();
    m_running = true;
    const hub::HubOptions options = hub::optionsFromEnvironment("baton/" BATON_VERSION);
    const std::string dest = destination.toStdString();
    const engine::CancelToken cancel = m_cancel;
    QPointer<ModelDownload> self(this);
    m_thread = std::thread([self, options, ref = *ref, dest, cancel] {
        using Clock = std::chrono::steady_clock;
        Clock::time_point last{};
        auto pull = [&]() -> hub::Result<hub::PullResult> {
            try {
                return hub::pull(
                    options, ref, dest,
                    [&](const hub::PullProgress& p) {
                        const auto now = Clock::now();
                        if (now - last < std::chrono::milliseconds(100) && p.done < p.total)
                            return;
                        last = now;
                        QMetaObject::invokeMethod(
                            self,
                            [self, p] {
                                if (self)
                                    Q_EMIT self->progress(QString::fromStdString(p.file), p.done,
                                                          p.total, p.bytesPerSecond, p.secondsLeft);
                            },
                            Qt::QueuedConnection);
                    },
                    cancel);
            } catch (const std::exception& e) { // nothing may escape a thread
                return hub::HubError{hub::HubErrorCode::WriteFailed, e.what(), 0};
            }
        };
        const auto result = pull();
        QMetaObject::invokeMethod(
            self,
            [self, result] {
                if (!self)
                    return;
                self->m_running = false;
                if (result)
                    Q_EMIT self->finished(QString::fromStdString(result->folder),
                                          result->alreadyThere);
                else
                    Q_EMIT self->failed(QString::fromStdString(result.error().message),
                                        result.error().code == hub::HubErrorCode::Cancelled);
            },
            Qt::QueuedConnection);
    });
    return true;
}

} // namespace baton::ui
