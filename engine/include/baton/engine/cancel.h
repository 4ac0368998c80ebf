// Cooperative cancellation: an atomic flag shared between the caller and a job.
#pragma once

#include <atomic>
#include <memory>

namespace baton::engine {

class CancelToken {
public:
    CancelToken()
        : m_flag(std::make_shared<std::atomic<bool>>(false)) {}

    void cancel() const { m_flag->store(true, std::memory_order_relaxed); }
    bool cancelled() const { return m_flag->load(std::memory_order_relaxed); }
    void reset() const { m_flag->store(false, std::memory_order_relaxed); }

private:
    std::shared_ptr<std::atomic<bool>> m_flag;
};

} // namespace baton::engine
