#include "baton/engine/qt/model_jobs.h"

#include <QMetaObject>

namespace baton::engine {

ModelJobs::ModelJobs(QObject* parent)
    : QObject(parent)
    , m_queue(std::make_unique<ModelQueue>()) {
    qRegisterMetaType<ModelInfo>();
    qRegisterMetaType<Error>();
}

ModelJobs::~ModelJobs() {
    m_queue.reset(); // cancels and joins; what it posts to this object is dropped with it
}

void ModelJobs::deliver(QPointer<QObject> receiver, std::function<void()> f) {
    QMetaObject::invokeMethod(
        this,
        [receiver, f = std::move(f)] {
            if (receiver)
                f();
        },
        Qt::QueuedConnection);
}

ModelQueue::Progress ModelJobs::progressTo(QPointer<QObject> receiver, Progress progress) {
    if (!progress)
        return {};
    return [this, receiver, progress = std::move(progress)](JobId, double fraction,
                                                            const std::string& message) {
        deliver(receiver, [progress, fraction, message = QString::fromStdString(message)] {
            progress(fraction, message);
        });
    };
}

JobId ModelJobs::load(QObject* receiver, const QString& folder, LoadOptions options,
                      std::function<void(const ModelInfo&)> done, Failed failed,
                      Progress progress) {
    QPointer<QObject> to(receiver);
    return m_queue->load(
        folder.toStdString(), std::move(options),
        [this, to, done = std::move(done), failed = std::move(failed)](JobId,
                                                                       const Result<ModelInfo>& r) {
            // The copy and the signal whoever asked; the answer only while they listen.
            QMetaObject::invokeMethod(
                this,
                [this, to, r, done, failed] {
                    if (r) {
                        m_model = *r;
                        Q_EMIT modelLoaded(*r);
                    }
                    if (!to)
                        return;
                    if (r && done)
                        done(*r);
                    else if (!r && failed)
                        failed(r.error());
                },
                Qt::QueuedConnection);
        },
        progressTo(to, std::move(progress)));
}

} // namespace baton::engine
