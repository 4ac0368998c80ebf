#include "engine_model_host.h"

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace baton::ui {

using engine::ErrorCode;
using engine::makeError;

struct EngineModelHost::Shared {
    mutable std::mutex mutex;
    std::shared_ptr<const engine::Model> model;
    bool closing = false;
};

// One server job on its way through the engine's queue.
struct EngineModelHost::Pending {
    enum class State { Waiting, Running, Done, Failed, Abandoned };
    std::mutex mutex;
    std::condition_variable changed;
    State state = State::Waiting;
    std::string error;
    server::ModelJob job;
    engine::JobId engineJob = 0;
};

EngineModelHost::EngineModelHost(engine::EngineController& engine, QObject* parent)
    : QObject(parent)
    , m_engine(engine)
    , m_shared(std::make_shared<Shared>()) {
    connect(&m_engine, &engine::EngineController::jobFinished, this,
            [this](engine::JobId job, bool ok, const engine::Error& error) {
                auto pending = m_pending.take(job);
                if (!pending)
                    return;
                std::lock_guard lock(pending->mutex);
                if (pending->state == Pending::State::Waiting) { // it never ran
                    pending->state = Pending::State::Failed;
                    pending->error = ok ? "the engine did not run the job" : error.message;
                    pending->changed.notify_all();
                }
            });
    connect(&m_engine, &engine::EngineController::modelLoaded, this, &EngineModelHost::refresh);
}

EngineModelHost::~EngineModelHost() {
    close();
}

std::shared_ptr<const engine::Model> EngineModelHost::current() const {
    std::lock_guard lock(m_shared->mutex);
    return m_shared->model;
}

void EngineModelHost::close() {
    std::lock_guard lock(m_shared->mutex);
    m_shared->closing = true;
}

void EngineModelHost::refresh() {
    auto shared = m_shared;
    m_engine.runGeneration([shared](const std::shared_ptr<const engine::Model>& model, const auto&,
                                    const engine::CancelToken&) {
        std::lock_guard lock(shared->mutex);
        shared->model = model;
        return engine::Result<engine::GenerationResult>(engine::GenerationResult{});
    });
}

void EngineModelHost::enqueue(const std::shared_ptr<Pending>& pending) {
    {
        std::lock_guard lock(pending->mutex);
        if (pending->state != Pending::State::Waiting)
            return; // gave up before it was queued
    }
    auto shared = m_shared;
    const engine::JobId id =
        m_engine.runGeneration([pending, shared](const std::shared_ptr<const engine::Model>& model,
                                                 const auto&, const engine::CancelToken&) {
            {
                std::lock_guard lock(shared->mutex);
                shared->model = model;
            }
            {
                std::lock_guard lock(pending->mutex);
                if (pending->state != Pending::State::Waiting)
                    return engine::Result<engine::GenerationResult>(engine::GenerationResult{});
                pending->state = Pending::State::Running;
            }
            pending->job(model);
            std::lock_guard lock(pending->mutex);
            pending->state = Pending::State::Done;
            pending->changed.notify_all();
            return engine::Result<engine::GenerationResult>(engine::GenerationResult{});
        });
    std::lock_guard lock(pending->mutex);
    pending->engineJob = id;
    m_pending.insert(id, pending);
}

engine::Result<void> EngineModelHost::run(const server::ModelJob& job,
                                          const engine::CancelToken& cancel,
                                          const std::function<bool()>& wanted) {
    auto closing = [this] {
        std::lock_guard lock(m_shared->mutex);
        return m_shared->closing;
    };
    if (closing())
        return makeError(ErrorCode::Cancelled, "the server is stopping");
    auto pending = std::make_shared<Pending>();
    pending->job = job;
    // EngineController belongs to the GUI thread: the job is queued from there.
    QMetaObject::invokeMethod(
        this, [this, pending] { enqueue(pending); }, Qt::QueuedConnection);
    std::unique_lock lock(pending->mutex);
    for (;;) {
        switch (pending->state) {
        case Pending::State::Done:
            return {};
        case Pending::State::Failed:
            return makeError(ErrorCode::Unsupported, pending->error);
        case Pending::State::Waiting:
            if (cancel.cancelled() || (wanted && !wanted()) || closing()) {
                pending->state = Pending::State::Abandoned;
                const engine::JobId id = pending->engineJob;
                lock.unlock();
                if (id != 0)
                    QMetaObject::invokeMethod(
                        this, [this, id] { m_engine.cancel(id); }, Qt::QueuedConnection);
                return makeError(ErrorCode::Cancelled, "cancelled while queued");
            }
            break;
        default: // running: the job stops itself when cancelled
            break;
        }
        pending->changed.wait_for(lock, std::chrono::milliseconds(50));
    }
}

} // namespace baton::ui
