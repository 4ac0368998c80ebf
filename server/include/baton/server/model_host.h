// Who runs the model for the server. The engine runs one job at a time: a host
// queues the server's jobs with every other user of the model (in the app, the story
// editor's generations), so two never run at once.
#pragma once

#include <baton/engine/cancel.h>
#include <baton/engine/error.h>
#include <baton/engine/model.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

namespace baton::server {

using ModelJob = std::function<void(const std::shared_ptr<const engine::Model>&)>;

class ModelHost {
public:
    virtual ~ModelHost() = default;
    // The model jobs run with now (null when none is loaded), for what needs no engine
    // time: its name, its tokenizer (thread-safe).
    virtual std::shared_ptr<const engine::Model> current() const = 0;
    // Runs `job` with the model once the jobs queued before it are done, and returns
    // when it has run. Fails with Cancelled when `cancel` fires or `wanted` returns
    // false while the job waits (polled about every 50 ms), and with Unsupported when
    // no model is loaded.
    virtual engine::Result<void> run(const ModelJob& job, const engine::CancelToken& cancel,
                                     const std::function<bool()>& wanted) = 0;
};

// A host for a model that only the server uses (baton-cli serve): jobs run on the
// calling thread, one at a time, in the order they arrived.
class ExclusiveModelHost final : public ModelHost {
public:
    explicit ExclusiveModelHost(std::shared_ptr<const engine::Model> model);
    std::shared_ptr<const engine::Model> current() const override { return m_model; }
    engine::Result<void> run(const ModelJob& job, const engine::CancelToken& cancel,
                             const std::function<bool()>& wanted) override;

private:
    std::shared_ptr<const engine::Model> m_model;
    std::mutex m_mutex;
    std::condition_variable m_turn;
    uint64_t m_nextTicket = 0, m_serving = 0;
};

} // namespace baton::server
