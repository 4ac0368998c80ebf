// Cooperative cancellation: an atomic flag shared between the caller and a job; and
// how a long job reports how far it is.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

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

// The fraction of a job done (0..1) and a short message ("setting 2 of 4"); the
// caller throttles (JobContext::progress in a model queue).
using JobProgress = std::function<void(double fraction, const std::string& message)>;

} // namespace baton::engine
