#include "baton/engine/model_queue.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

namespace baton::engine {

namespace {

constexpr int64_t kReportIntervalMs = 50;

int64_t nowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

} // namespace

// Where a job's reports go, and the queue's model it may replace.
struct JobContext::Sink {
    std::function<void(double, const std::string&)> progress;
    std::function<void(std::shared_ptr<const Model>)> setModel;
};

JobContext::JobContext(JobId id, std::shared_ptr<const Model> model, CancelToken cancel,
                       std::shared_ptr<Sink> sink)
    : m_id(id)
    , m_model(std::move(model))
    , m_cancel(std::move(cancel))
    , m_sink(std::move(sink)) {}

bool JobContext::due() {
    const int64_t now = nowMs();
    if (m_lastReport >= 0 && now - m_lastReport < kReportIntervalMs)
        return false;
    m_lastReport = now;
    return true;
}

Result<std::shared_ptr<const Model>> JobContext::requireModel() const {
    if (!m_model)
        return makeError(ErrorCode::InvalidArgument, "no model is loaded");
    return m_model;
}

JobProgress JobContext::progressReporter() {
    return [this](double fraction, const std::string& message) { progress(fraction, message); };
}

void JobContext::progress(double fraction, const std::string& message) {
    if (!due() && fraction < 1.0)
        return;
    if (m_sink && m_sink->progress)
        m_sink->progress(fraction, message);
}

void JobContext::setModel(std::shared_ptr<const Model> model) {
    m_model = model;
    if (m_sink && m_sink->setModel)
        m_sink->setModel(std::move(model));
}

struct ModelQueue::Impl {
    struct Job {
        JobId id = 0;
        Body body;
        Finished finished;
        Progress progress;
        CancelToken cancel;
    };

    mutable std::mutex mutex;
    std::condition_variable wake;
    std::deque<Job> queue;
    std::map<JobId, CancelToken> tokens; // queued and running
    std::shared_ptr<const Model> model;
    JobId next = 1;
    bool stopping = false;
    std::thread thread;

    void loop() {
        for (;;) {
            Job job;
            std::shared_ptr<const Model> current;
            {
                std::unique_lock lock(mutex);
                wake.wait(lock, [&] { return stopping || !queue.empty(); });
                if (queue.empty())
                    return; // stopping, nothing left
                job = std::move(queue.front());
                queue.pop_front();
                current = model;
            }
            execute(job, std::move(current));
            std::lock_guard lock(mutex);
            tokens.erase(job.id);
        }
    }

    void execute(Job& job, std::shared_ptr<const Model> current) {
        Result<void> result;
        if (job.cancel.cancelled()) {
            result = makeError(ErrorCode::Cancelled, "cancelled before it started");
        } else {
            auto sink = std::make_shared<JobContext::Sink>();
            const JobId id = job.id;
            if (job.progress)
                sink->progress = [&job, id](double f, const std::string& m) {
                    job.progress(id, f, m);
                };
            sink->setModel = [this](std::shared_ptr<const Model> m) {
                std::lock_guard lock(mutex);
                model = std::move(m);
            };
            JobContext context(id, std::move(current), job.cancel, std::move(sink));
            try {
                result = job.body(context);
            } catch (const std::exception& e) {
                result = makeError(ErrorCode::Internal, std::string("engine: ") + e.what());
            } catch (...) {
                result = makeError(ErrorCode::Internal, "engine: an unknown exception");
            }
        }
        if (job.finished) {
            try {
                job.finished(job.id, result);
            } catch (...) {
                // A report that throws must not end the queue's thread.
            }
        }
    }
};

ModelQueue::ModelQueue()
    : ModelQueue(nullptr) {}

ModelQueue::ModelQueue(std::shared_ptr<const Model> model)
    : m_impl(std::make_unique<Impl>()) {
    m_impl->model = std::move(model);
    m_impl->thread = std::thread([impl = m_impl.get()] { impl->loop(); });
}

ModelQueue::~ModelQueue() {
    {
        std::lock_guard lock(m_impl->mutex);
        m_impl->stopping = true;
        for (auto& [id, token] : m_impl->tokens)
            token.cancel();
    }
    m_impl->wake.notify_all();
    m_impl->thread.join();
}

JobId ModelQueue::submit(Body body, Finished finished, Progress progress, CancelToken cancel) {
    std::lock_guard lock(m_impl->mutex);
    const JobId id = m_impl->next++;
    if (m_impl->stopping)
        cancel.cancel();
    m_impl->tokens.emplace(id, cancel);
    m_impl->queue.push_back(
        {id, std::move(body), std::move(finished), std::move(progress), std::move(cancel)});
    m_impl->wake.notify_one();
    return id;
}

Result<void> ModelQueue::run(Body body, const CancelToken& cancel,
                             const std::function<bool()>& wanted) {
    struct Wait {
        std::mutex mutex;
        std::condition_variable changed;
        bool started = false, done = false;
        Result<void> result;
    };
    auto wait = std::make_shared<Wait>();
    // Marked started under the lock, so the caller either gives up first (the job then
    // never runs) or sees it running and waits for it to end.
    auto guarded = [wait, body = std::move(body)](JobContext& context) -> Result<void> {
        {
            std::lock_guard lock(wait->mutex);
            if (context.cancelled())
                return makeError(ErrorCode::Cancelled, "cancelled while queued");
            wait->started = true;
        }
        return body(context);
    };
    const CancelToken token = cancel;
    submit(
        std::move(guarded),
        [wait](JobId, const Result<void>& r) {
            std::lock_guard lock(wait->mutex);
            wait->result = r;
            wait->done = true;
            wait->changed.notify_all();
        },
        {}, token);
    std::unique_lock lock(wait->mutex);
    while (!wait->done) {
        if (!wait->started && (token.cancelled() || (wanted && !wanted()))) {
            token.cancel(); // it never runs
            return makeError(ErrorCode::Cancelled, "cancelled while queued");
        }
        wait->changed.wait_for(lock, std::chrono::milliseconds(50));
    }
    return wait->result;
}

JobId ModelQueue::load(const std::string& folder, LoadOptions options,
                       std::function<void(JobId, const Result<ModelInfo>&)> done,
                       Progress progress) {
    auto info = std::make_shared<Result<ModelInfo>>(
        makeError(ErrorCode::Cancelled, "cancelled before it started"));
    CancelToken token;
    auto body = [folder, options, info, token](JobContext& context) mutable -> Result<void> {
        options.cancel = token;
        auto user = options.progress;
        options.progress = [&context, &folder, user](double f) {
            context.progress(f, "loading " + folder);
            return (!user || user(f)) && !context.cancelled();
        };
        auto model = Model::load(folder, options);
        if (!model) {
            *info = model.error();
            return model.error();
        }
        *info = (*model)->info();
        context.setModel(std::move(*model));
        return {};
    };
    Finished finished;
    if (done)
        finished = [info, done = std::move(done)](JobId id, const Result<void>& r) {
            done(id, r ? *info : Result<ModelInfo>(r.error()));
        };
    return submit(std::move(body), std::move(finished), std::move(progress), token);
}

void ModelQueue::cancel(JobId job) {
    std::lock_guard lock(m_impl->mutex);
    if (auto it = m_impl->tokens.find(job); it != m_impl->tokens.end())
        it->second.cancel();
}

void ModelQueue::cancelAll() {
    std::lock_guard lock(m_impl->mutex);
    for (auto& [id, token] : m_impl->tokens)
        token.cancel();
}

std::shared_ptr<const Model> ModelQueue::current() const {
    std::lock_guard lock(m_impl->mutex);
    return m_impl->model;
}

size_t ModelQueue::pending() const {
    std::lock_guard lock(m_impl->mutex);
    return m_impl->tokens.size();
}

} // namespace baton::engine
