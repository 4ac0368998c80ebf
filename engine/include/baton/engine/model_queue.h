// One way to run work on the model: a queue that owns the loaded model and one thread,
// and runs jobs one at a time in the order they came (a load, a story's continuation,
// a server request, an evaluation, a fine-tune, a topic fit, a probe). Every user of a
// model shares its queue, so two jobs never run it at once: the app's Write page and
// its Server page, baton-cli serve. Qt-free; the app reaches it through the Qt adapter
// (engine/qt/model_jobs.h), which answers on the caller's thread.
//
// A job is a function of its JobContext: the model it runs with, its cancel token and
// a progress reporter. It ends with a Result; an exception thrown inside a job is
// caught at its boundary and becomes an Internal error. A job cancelled while it waits
// never runs (it ends with Cancelled); a running job sees its token and stops itself.
// Thread-safe: every member may be called from any thread, except that run() may not
// be called from a job (it would wait for itself).
#pragma once

#include "baton/engine/cancel.h"
#include "baton/engine/error.h"
#include "baton/engine/model.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace baton::engine {

using JobId = uint64_t;

// What a running job sees and may do.
class JobContext {
public:
    JobId id() const { return m_id; }
    // The model the job runs with (null when none is loaded).
    const std::shared_ptr<const Model>& model() const { return m_model; }
    // The model, or InvalidArgument "no model is loaded": for jobs that need one.
    Result<std::shared_ptr<const Model>> requireModel() const;
    const CancelToken& cancel() const { return m_cancel; }
    bool cancelled() const { return m_cancel.cancelled(); }
    // The fraction done (0..1) and a short message: the first report at once, then at
    // most one every 50 ms, and always the last (fraction >= 1).
    void progress(double fraction, const std::string& message);
    // progress() as a JobProgress, for the core functions that take one (valid while
    // this context lives).
    JobProgress progressReporter();
    // Whether a throttled report is due now (the first at once, then every 50 ms): for
    // jobs that stream other reports at the same pace (a generation's text).
    bool due();
    // Makes `model` the one this and later jobs run with (a load).
    void setModel(std::shared_ptr<const Model> model);

private:
    friend class ModelQueue;
    struct Sink;
    JobContext(JobId id, std::shared_ptr<const Model> model, CancelToken cancel,
               std::shared_ptr<Sink> sink);
    JobId m_id;
    std::shared_ptr<const Model> m_model;
    CancelToken m_cancel;
    std::shared_ptr<Sink> m_sink;
    int64_t m_lastReport = -1; // steady-clock milliseconds; -1: none yet
};

class ModelQueue {
public:
    using Body = std::function<Result<void>(JobContext&)>;
    // On the queue's thread, once the job ended (also when it never ran).
    using Finished = std::function<void(JobId, const Result<void>&)>;
    // On the queue's thread, as the job reports (JobContext::progress).
    using Progress = std::function<void(JobId, double, const std::string&)>;

    ModelQueue();
    // A queue whose jobs run with `model` until a load replaces it (the CLI's and the
    // tests' model, loaded before).
    explicit ModelQueue(std::shared_ptr<const Model> model);
    // Cancels every job; those that did not start end with Cancelled; waits for the
    // running one to stop.
    ~ModelQueue();
    ModelQueue(const ModelQueue&) = delete;
    ModelQueue& operator=(const ModelQueue&) = delete;

    // Queues `body` after every job before it. `cancel` is the job's token (a new one
    // when not given; cancel(id) fires it).
    JobId submit(Body body, Finished finished = {}, Progress progress = {},
                 CancelToken cancel = {});
    // Queues `body` and waits until it has run (not from a job of this queue). While it
    // waits in the queue, `cancel` firing or `wanted` returning false (asked about
    // every 50 ms) gives up: Cancelled, and the job never runs.
    Result<void> run(Body body, const CancelToken& cancel = {},
                     const std::function<bool()>& wanted = {});
    // Loads a model folder (Model::load) and makes it the one later jobs run with;
    // `done` on the queue's thread with its information or the error.
    JobId load(const std::string& folder, LoadOptions options,
               std::function<void(JobId, const Result<ModelInfo>&)> done = {},
               Progress progress = {});

    void cancel(JobId job);
    void cancelAll();
    // The model jobs run with now (null when none is loaded).
    std::shared_ptr<const Model> current() const;
    // Jobs queued or running.
    size_t pending() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace baton::engine
