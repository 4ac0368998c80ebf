#include "kernels/worker_team.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace baton::engine::cpu {

namespace {

class Team {
public:
    Team() {
        const int workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) - 1;
        for (int i = 1; i <= workers; ++i)
            m_threads.emplace_back([this, i] { work(i); });
    }

    ~Team() {
        m_stop.store(true);
        m_word.store((m_word.load() / kStep + 1) * kStep); // a step of no parts
        { std::lock_guard lock(m_sleep); }
        m_wake.notify_all();
        for (auto& t : m_threads)
            t.join();
    }

    int workers() const { return static_cast<int>(m_threads.size()); }

    // Runs the parts; false when another caller holds the team (the caller then runs
    // them itself).
    bool run(int parts, const std::function<void(int, int)>& fn) {
        std::unique_lock busy(m_caller, std::try_to_lock);
        if (!busy.owns_lock())
            return false;
        m_fn = &fn;
        m_remaining.store(parts - 1);
        // One word holds the step's number and its parts, so that a worker that is
        // not in this step never reads another step's parts (seq_cst: publishes m_fn).
        const uint64_t next = (m_word.load() / kStep + 1) * kStep + static_cast<uint64_t>(parts);
        m_word.store(next);
        if (m_sleepers.load() > 0) {
            std::lock_guard lock(m_sleep); // a sleeper is inside wait() or has seen the
            m_wake.notify_all();           // new generation
        }
        fn(0, parts);
        while (m_remaining.load(std::memory_order_acquire) > 0)
            _mm_pause();
        return true;
    }

private:
    void work(int index) {
        uint64_t seen = 0; // the last step's number
        for (;;) {
            // Spin for a while: the next step of the same token comes within
            // microseconds.
            const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
            uint64_t w = m_word.load();
            for (int i = 0; w / kStep == seen; ++i) {
                _mm_pause();
                if ((i & 255) == 255 && std::chrono::steady_clock::now() > until)
                    break;
                w = m_word.load();
            }
            if (w / kStep == seen) { // then sleep until the next step
                std::unique_lock lock(m_sleep);
                m_sleepers.fetch_add(1);
                m_wake.wait(lock, [&] { return m_stop || m_word.load() / kStep != seen; });
                m_sleepers.fetch_sub(1);
                w = m_word.load();
            }
            if (m_stop.load())
                return;
            seen = w / kStep;
            const int parts = static_cast<int>(w % kStep);
            if (index < parts) { // the caller waits for us: m_fn stays this step's
                (*m_fn)(index, parts);
                m_remaining.fetch_sub(1, std::memory_order_acq_rel);
            }
        }
    }

    std::vector<std::thread> m_threads;
    std::mutex m_caller;                    // one step at a time
    static constexpr uint64_t kStep = 1024; // parts < kStep
    const std::function<void(int, int)>* m_fn = nullptr;
    std::atomic<uint64_t> m_word{0}; // step number * kStep + parts
    std::atomic<int> m_remaining{0};
    std::atomic<int> m_sleepers{0};
    std::mutex m_sleep;
    std::condition_variable m_wake;
    std::atomic<bool> m_stop{false};
};

Team& team() {
    static Team t;
    return t;
}

std::atomic<int> g_threads{1};

} // namespace

void setThreadCount(int threads) {
    g_threads = std::max(1, threads);
}
int threadCount() {
    return g_threads;
}

void runParts(int parts, const std::function<void(int, int)>& fn) {
    if (parts > 1) {
        Team& t = team();
        parts = std::min({parts, t.workers() + 1, 1023});
        if (parts > 1 && t.run(parts, fn))
            return;
    }
    for (int p = 0; p < parts; ++p)
        fn(p, std::max(parts, 1));
}

} // namespace baton::engine::cpu
