// The engine's one Qt adapter: a ModelQueue (engine/model_queue.h) whose jobs answer
// on the thread this object lives on (the GUI thread). A job is a typed function of its
// JobContext run on the queue's thread; its value comes back to `done`, its error to
// `failed`, its progress and reports in order before them, each only while `receiver`
// still lives (a panel closed meanwhile hears nothing). No broadcast signals to filter
// by job: the caller's callbacks are the job's answer. The shape of KeePassXC's
// AsyncTask::runThenCallback and of the storage facade's request<T>.
#pragma once

#include <baton/engine/model_queue.h>

#include <QObject>
#include <QPointer>
#include <QString>

#include <functional>
#include <memory>
#include <optional>
#include <utility>

namespace baton::engine {

class ModelJobs : public QObject {
    Q_OBJECT
public:
    explicit ModelJobs(QObject* parent = nullptr);
    // Cancels every job and waits for the running one (answers still on their way are
    // dropped with this object).
    ~ModelJobs() override;

    // The queue itself: for the server (ModelQueue::run from its threads) and for jobs
    // that need no answer here.
    ModelQueue& queue() { return *m_queue; }

    template <typename T>
    using Job = std::function<Result<T>(JobContext&)>;
    using Failed = std::function<void(const Error&)>;
    using Progress = std::function<void(double fraction, const QString& message)>;

    // Runs `job`; `done` with its value or `failed` with its error.
    template <typename T>
    JobId run(QObject* receiver, Job<T> job, std::function<void(T)> done, Failed failed = {},
              Progress progress = {});

    // A job that also reports values as it goes (a generation's text, an evaluation's
    // rows): the job calls report(value) on the queue's thread; onReport sees each on
    // this thread, in order, before done.
    template <typename T, typename R>
    JobId stream(QObject* receiver,
                 std::function<Result<T>(JobContext&, const std::function<void(R)>&)> job,
                 std::function<void(R)> onReport, std::function<void(T)> done, Failed failed = {},
                 Progress progress = {});

    // Loads a model folder; model() and modelLoaded() follow, then `done`.
    JobId load(QObject* receiver, const QString& folder, LoadOptions options,
               std::function<void(const ModelInfo&)> done, Failed failed = {},
               Progress progress = {});

    void cancel(JobId job) { m_queue->cancel(job); }
    void cancelAll() { m_queue->cancelAll(); }
    // The model the last successful load produced (this thread's copy of its info).
    const std::optional<ModelInfo>& model() const { return m_model; }
    // Jobs queued or running.
    int pendingJobs() const { return int(m_queue->pending()); }

Q_SIGNALS:
    // A load changed the model every later job runs with (whoever asked for it).
    void modelLoaded(baton::engine::ModelInfo info);

private:
    // Runs `f` on this object's thread, if `receiver` is still there then.
    void deliver(QPointer<QObject> receiver, std::function<void()> f);
    ModelQueue::Progress progressTo(QPointer<QObject> receiver, Progress progress);

    std::unique_ptr<ModelQueue> m_queue;
    std::optional<ModelInfo> m_model;
};

template <typename T>
JobId ModelJobs::run(QObject* receiver, Job<T> job, std::function<void(T)> done, Failed failed,
                     Progress progress) {
    auto value = std::make_shared<std::optional<T>>();
    QPointer<QObject> to(receiver);
    return m_queue->submit(
        [job = std::move(job), value](JobContext& context) -> Result<void> {
            Result<T> r = job(context);
            if (!r)
                return r.error();
            value->emplace(std::move(*r));
            return {};
        },
        [this, to, value, done = std::move(done),
         failed = std::move(failed)](JobId, const Result<void>& r) {
            deliver(to, [r, value, done, failed] {
                if (r && done)
                    done(std::move(**value));
                else if (!r && failed)
                    failed(r.error());
            });
        },
        progressTo(to, std::move(progress)));
}

template <typename T, typename R>
JobId ModelJobs::stream(QObject* receiver,
                        std::function<Result<T>(JobContext&, const std::function<void(R)>&)> job,
                        std::function<void(R)> onReport, std::function<void(T)> done, Failed failed,
                        Progress progress) {
    QPointer<QObject> to(receiver);
    auto report = [this, to, onReport = std::move(onReport)](R value) {
        if (onReport)
            deliver(to, [onReport, value = std::move(value)] { onReport(value); });
    };
    Job<T> body = [job = std::move(job), report](JobContext& context) {
        return job(context, report);
    };
    return run<T>(receiver, std::move(body), std::move(done), std::move(failed),
                  std::move(progress));
}

} // namespace baton::engine

Q_DECLARE_METATYPE(baton::engine::ModelInfo)
Q_DECLARE_METATYPE(baton::engine::Error)
