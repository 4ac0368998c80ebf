#include "read_probe.h"

#include "kernels/vector_ops.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace baton::bench {

namespace {
enum class Job { Fill, Read, Quit };
} // namespace

// The calling thread reads the first slice; threads - 1 helpers read the others. Between
// passes the helpers sleep on a condition variable (they take no core from what is
// measured between two probes); for a pass they wake, report ready and spin until the
// start.
struct ReadBandwidthProbe::Team {
    int threads = 1;
    size_t floats = 0;
    float* data = nullptr;
    std::vector<std::thread> helpers;
    std::mutex m;
    std::condition_variable cv;
    uint64_t generation = 0;
    Job job = Job::Fill;
    std::atomic<int> ready{0}, done{0};
    std::atomic<bool> go{false};
    std::vector<float> sums;

    size_t begin(int t) const { return floats / 64 * size_t(t) / size_t(threads) * 64; }
    size_t end(int t) const { return floats / 64 * size_t(t + 1) / size_t(threads) * 64; }

    void work(int t, Job j) {
        const size_t b = begin(t), e = end(t);
        if (j == Job::Fill)
            std::fill(data + b, data + e, 1.0f);
        else
            sums[size_t(t)] = engine::cpu::readSum(data + b, int64_t(e - b));
    }

    void helper(int t) {
        uint64_t seen = 0;
        for (;;) {
            Job j;
            {
                std::unique_lock<std::mutex> lock(m);
                cv.wait(lock, [&] { return generation != seen; });
                seen = generation;
                j = job;
            }
            if (j == Job::Quit)
                return;
            ready.fetch_add(1);
            while (!go.load(std::memory_order_acquire))
                std::this_thread::yield();
            work(t, j);
            done.fetch_add(1);
        }
    }

    // One pass of `j` over the buffer; the seconds from the start to the last slice done.
    double pass(Job j) {
        {
            std::lock_guard<std::mutex> lock(m);
            job = j;
            ready = 0;
            done = 0;
            go = false;
            ++generation;
        }
        cv.notify_all();
        while (ready.load() < threads - 1)
            std::this_thread::yield();
        const auto t0 = std::chrono::steady_clock::now();
        go.store(true, std::memory_order_release);
        work(0, j);
        while (done.load() < threads - 1)
            std::this_thread::yield();
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
};

ReadBandwidthProbe::ReadBandwidthProbe(int threads, size_t bytes)
    : m_team(std::make_unique<Team>()) {
    Team& t = *m_team;
    t.threads = std::max(1, threads);
    t.floats = std::max<size_t>(bytes / sizeof(float) / 64, size_t(t.threads)) * 64;
    t.sums.assign(size_t(t.threads), 0.f);
    for (int i = 1; i < t.threads; ++i)
        t.helpers.emplace_back([this, i] { m_team->helper(i); });
}

ReadBandwidthProbe::~ReadBandwidthProbe() {
    Team& t = *m_team;
    {
        std::lock_guard<std::mutex> lock(t.m);
        t.job = Job::Quit;
        ++t.generation;
    }
    t.cv.notify_all();
    for (auto& h : t.helpers)
        h.join();
}

int ReadBandwidthProbe::threads() const {
    return m_team->threads;
}

double ReadBandwidthProbe::measure(int passes) {
    Team& t = *m_team;
    t.data = static_cast<float*>(std::aligned_alloc(64, t.floats * sizeof(float)));
    if (!t.data) {
        std::fprintf(stderr, "error: no memory for the read-bandwidth probe's buffer\n");
        std::exit(1);
    }
    t.pass(Job::Fill); // each slice's pages touched by the thread that reads them
    double best = 0;
    for (int p = 0; p < std::max(1, passes) + 1; ++p) {
        const double seconds = t.pass(Job::Read);
        double total = 0;
        for (float s : t.sums)
            total += double(s);
        // Every element is 1: the sums are checked, which also keeps them alive.
        if (!(total > 0.999 * double(t.floats) && total < 1.001 * double(t.floats))) {
            std::fprintf(stderr, "error: the read-bandwidth probe summed %.0f of %zu\n", total,
                         t.floats);
            std::exit(1);
        }
        if (p > 0) // the first pass wakes the threads and the memory up
            best = std::max(best, double(t.floats * sizeof(float)) / seconds / 1e9);
    }
    std::free(t.data);
    t.data = nullptr;
    return best;
}

} // namespace baton::bench
