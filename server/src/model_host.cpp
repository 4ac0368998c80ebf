#include "baton/server/model_host.h"

#include <chrono>

namespace baton::server {

ExclusiveModelHost::ExclusiveModelHost(std::shared_ptr<const engine::Model> model)
    : m_model(std::move(model)) {}

engine::Result<void> ExclusiveModelHost::run(const ModelJob& job, const engine::CancelToken& cancel,
                                             const std::function<bool()>& wanted) {
    if (!m_model)
        return engine::makeError(engine::ErrorCode::Unsupported, "no model is loaded");
    std::unique_lock lock(m_mutex);
    const uint64_t ticket = m_nextTicket++;
    // A ticket that gives up still has to take its turn, or the ones behind it would
    // wait forever: it passes the turn on at once.
    bool gaveUp = false;
    while (m_serving != ticket) {
        m_turn.wait_for(lock, std::chrono::milliseconds(50));
        if (!gaveUp && (cancel.cancelled() || (wanted && !wanted())))
            gaveUp = true;
    }
    if (!gaveUp && (cancel.cancelled() || (wanted && !wanted())))
        gaveUp = true;
    struct PassOn {
        ExclusiveModelHost& host;
        std::unique_lock<std::mutex>& lock;
        ~PassOn() {
            if (!lock.owns_lock())
                lock.lock();
            ++host.m_serving;
            host.m_turn.notify_all();
        }
    } passOn{*this, lock};
    if (gaveUp)
        return engine::makeError(engine::ErrorCode::Cancelled, "cancelled while queued");
    lock.unlock();
    job(m_model);
    return {};
}

} // namespace baton::server
