// The model queue (engine/model_queue.h), without Qt's event loop: jobs in the order
// they came, one at a time; cancelled while queued (never run) and while running (the
// job sees it); a throwing job becomes an error and the queue goes on; the destructor
// ends what waits and joins; run() from four threads at once; a load makes the model
// current for the jobs after it.
#include "test_support.h"
#include "verify_ok.h"

#include <baton/engine/model_queue.h>

#include <QtTest>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace baton::engine;
using namespace std::chrono_literals;

namespace {

// A job that waits until `go` is set (or it is cancelled).
ModelQueue::Body blocker(std::atomic<bool>& started, std::atomic<bool>& go) {
    return [&started, &go](JobContext& c) -> Result<void> {
        started = true;
        while (!go && !c.cancelled())
            std::this_thread::sleep_for(1ms);
        if (c.cancelled())
            return makeError(ErrorCode::Cancelled, "stopped");
        return {};
    };
}

bool waitUntil(const std::function<bool()>& condition, int ms = 10000) {
    for (int i = 0; i < ms && !condition(); ++i)
        std::this_thread::sleep_for(1ms);
    return condition();
}

} // namespace

class TestModelQueue : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { baton::test::initTestProcess(); }

    void jobsRunOneAtATimeInOrder() {
        ModelQueue q;
        std::mutex m;
        std::vector<int> order;
        std::atomic<int> running{0}, most{0}, finished{0};
        for (int i = 0; i < 20; ++i)
            q.submit(
                [&, i](JobContext&) -> Result<void> {
                    most = std::max(most.load(), ++running);
                    std::this_thread::sleep_for(1ms);
                    {
                        std::lock_guard lock(m);
                        order.push_back(i);
                    }
                    --running;
                    return {};
                },
                [&](JobId, const Result<void>& r) {
                    QVERIFY(r.ok());
                    ++finished;
                });
        QVERIFY(waitUntil([&] { return finished == 20; }));
        QCOMPARE(most.load(), 1);
        for (int i = 0; i < 20; ++i)
            QCOMPARE(order[size_t(i)], i);
        QVERIFY(waitUntil([&] { return q.pending() == 0; }));
    }

    void cancelWhileQueuedAndWhileRunning() {
        ModelQueue q;
        std::atomic<bool> started{false}, go{false}, secondRan{false};
        std::atomic<int> cancelled{0};
        const JobId first = q.submit(blocker(started, go), [&](JobId, const Result<void>& r) {
            if (!r && r.error().code == ErrorCode::Cancelled)
                ++cancelled;
        });
        const JobId second = q.submit(
            [&](JobContext&) -> Result<void> {
                secondRan = true;
                return {};
            },
            [&](JobId, const Result<void>& r) {
                if (!r && r.error().code == ErrorCode::Cancelled)
                    ++cancelled;
            });
        QVERIFY(waitUntil([&] { return started.load(); }));
        q.cancel(second); // queued: it never runs
        q.cancel(first);  // running: it sees its token
        QVERIFY(waitUntil([&] { return cancelled == 2; }));
        QVERIFY(!secondRan);
        Q_UNUSED(go);
    }

    void aThrowingJobIsAnErrorAndTheQueueGoesOn() {
        ModelQueue q;
        std::atomic<bool> after{false};
        std::optional<Error> error;
        std::mutex m;
        q.submit([](JobContext&) -> Result<void> { throw std::runtime_error("boom"); },
                 [&](JobId, const Result<void>& r) {
                     std::lock_guard lock(m);
                     if (!r)
                         error = r.error();
                 });
        auto r = q.run([&](JobContext&) -> Result<void> {
            after = true;
            return {};
        });
        QVERIFY(r.ok());
        QVERIFY(after);
        std::lock_guard lock(m);
        QVERIFY(error.has_value());
        QCOMPARE(error->code, ErrorCode::Internal);
        QVERIFY(error->message.find("boom") != std::string::npos);
    }

    void theDestructorEndsWhatWaitsAndJoins() {
        std::atomic<bool> started{false}, go{false};
        std::atomic<int> cancelled{0}, ran{0};
        {
            ModelQueue q;
            q.submit(blocker(started, go), [&](JobId, const Result<void>& r) {
                if (!r)
                    ++cancelled;
            });
            for (int i = 0; i < 5; ++i)
                q.submit(
                    [&](JobContext&) -> Result<void> {
                        ++ran;
                        return {};
                    },
                    [&](JobId, const Result<void>& r) {
                        if (!r)
                            ++cancelled;
                    });
            QVERIFY(waitUntil([&] { return started.load(); }));
        } // the running job is cancelled, the five never run
        QCOMPARE(ran.load(), 0);
        QCOMPARE(cancelled.load(), 6);
        Q_UNUSED(go);
    }

    void runFromFourThreads() {
        ModelQueue q;
        std::atomic<int> running{0}, most{0}, done{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&] {
                for (int i = 0; i < 25; ++i) {
                    auto r = q.run([&](JobContext&) -> Result<void> {
                        most = std::max(most.load(), ++running);
                        std::this_thread::sleep_for(100us);
                        --running;
                        return {};
                    });
                    if (r)
                        ++done;
                }
            });
        for (auto& t : threads)
            t.join();
        QCOMPARE(done.load(), 100);
        QCOMPARE(most.load(), 1);
    }

    // run() gives up while its job waits (the cancel token, or `wanted` turning false),
    // and the job never runs; once running, it runs to its end.
    void runGivesUpWhileQueued() {
        ModelQueue q;
        std::atomic<bool> started{false}, go{false}, ran{false};
        q.submit(blocker(started, go));
        QVERIFY(waitUntil([&] { return started.load(); }));
        std::atomic<bool> want{true};
        std::thread giveUp([&] {
            std::this_thread::sleep_for(30ms);
            want = false;
        });
        auto r = q.run(
            [&](JobContext&) -> Result<void> {
                ran = true;
                return {};
            },
            {}, [&] { return want.load(); });
        giveUp.join();
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::Cancelled);
        CancelToken token;
        std::thread cancel([&] {
            std::this_thread::sleep_for(30ms);
            token.cancel();
        });
        QCOMPARE(q.run([&](JobContext&) -> Result<void> { return {}; }, token).error().code,
                 ErrorCode::Cancelled);
        cancel.join();
        go = true;
        QVERIFY(q.run([](JobContext&) -> Result<void> { return {}; }).ok());
        QVERIFY(!ran);
    }

    void progressIsThrottled() {
        ModelQueue q;
        std::atomic<int> reports{0};
        std::atomic<double> last{0};
        q.submit(
            [](JobContext& c) -> Result<void> {
                for (int i = 1; i <= 1000; ++i)
                    c.progress(double(i) / 1000, "step");
                return {};
            },
            {},
            [&](JobId, double f, const std::string&) {
                ++reports;
                last = f;
            });
        QVERIFY(q.run([](JobContext&) -> Result<void> { return {}; }).ok());
        QVERIFY(reports >= 2 && reports < 100); // the first, the last, few between
        QCOMPARE(last.load(), 1.0);
    }

    void aLoadMakesTheModelCurrent() {
        ModelQueue q;
        QVERIFY(!q.current());
        std::optional<Result<ModelInfo>> loaded;
        std::mutex m;
        q.load(baton::test::fixture(), {}, [&](JobId, const Result<ModelInfo>& r) {
            std::lock_guard lock(m);
            loaded = r;
        });
        std::shared_ptr<const Model> seen;
        BATON_VERIFY_OK(q.run([&](JobContext& c) -> Result<void> {
            seen = c.model();
            return {};
        }));
        QVERIFY(seen);
        QCOMPARE(q.current(), seen);
        {
            std::lock_guard lock(m);
            QVERIFY(loaded && loaded->ok());
            QCOMPARE((*loaded)->config.nLayer, seen->config().nLayer);
        }
        // A folder that is not a model: an error, and the model stays.
        std::optional<Error> failed;
        q.load("/nonexistent/model", {}, [&](JobId, const Result<ModelInfo>& r) {
            std::lock_guard lock(m);
            if (!r)
                failed = r.error();
        });
        BATON_VERIFY_OK(q.run([](JobContext&) -> Result<void> { return {}; }));
        std::lock_guard lock(m);
        QVERIFY(failed.has_value());
        QCOMPARE(q.current(), seen);
    }
};

QTEST_GUILESS_MAIN(TestModelQueue)
#include "tst_model_queue.moc"
