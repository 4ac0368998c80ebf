// The decoder's threads: the thread budget (kernels/core_budget.h: /proc/stat parsing,
// the team size for the cores other programs leave free, the cap, switching
// adaptation off) and the worker team (kernels/worker_team.h: every part runs
// exactly once, also with two callers at once). Whether they keep decode fast on a
// busy machine is measured by tests/bench/run.sh busy, not here.
#include "kernels/core_budget.h"
#include "kernels/worker_team.h"

#include <baton/engine/model.h>

#include <QtTest>

#include <atomic>
#include <thread>
#include <vector>

using namespace baton::engine;

class TestCoreBudget : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void parsesTheCpuLine() {
        const auto t = cpu::parseProcStat("cpu  100 50 30 1000 7 2 3 5 0 0\n"
                                          "cpu0 50 25 15 500 3 1 1 2 0 0\n",
                                          100.0);
        QVERIFY(t.has_value());
        QCOMPARE(t->busy, (100 + 30 + 2 + 3 + 5) / 100.0); // user system irq softirq steal
        QCOMPARE(t->niced, 0.5);
        // Old kernels print fewer columns; idle must be there.
        const auto old = cpu::parseProcStat("cpu 10 0 10 100\n", 100.0);
        QVERIFY(old.has_value());
        QCOMPARE(old->busy, 0.2);
    }

    // Niced programs are left out of the busy time only when nice really lowers them
    // below us: not when we are niced ourselves, not when the kernel schedules by
    // session groups.
    void nicedTimeCountsWhenNiceDoesNotRankUs() {
        QVERIFY(!cpu::nicedCountsAsBusy(false, false));
        QVERIFY(cpu::nicedCountsAsBusy(true, false));
        QVERIFY(cpu::nicedCountsAsBusy(false, true));
        QVERIFY(cpu::nicedCountsAsBusy(true, true));
    }

    void refusesWhatIsNotAProcStat() {
        QVERIFY(!cpu::parseProcStat("", 100.0));
        QVERIFY(!cpu::parseProcStat("cpu0 1 2 3 4\n", 100.0)); // per-core lines only
        QVERIFY(!cpu::parseProcStat("cpu  1 2\n", 100.0));
        QVERIFY(!cpu::parseProcStat("cpu  1 2 3 4\n", 0.0));
    }

    void teamSizeFollowsTheFreeCores_data() {
        QTest::addColumn<int>("cores");
        QTest::addColumn<int>("cap");
        QTest::addColumn<double>("others");
        QTest::addColumn<int>("threads");
        QTest::newRow("idle") << 2 << 0 << 0.05 << 2;
        QTest::newRow("one busy") << 2 << 0 << 1.0 << 1;
        QTest::newRow("competing: 2 of ours + 1 busy loop") << 2 << 0 << 0.67 << 1;
        QTest::newRow("both busy") << 2 << 0 << 2.0 << 1;
        QTest::newRow("light load") << 2 << 0 << 0.2 << 2;
        QTest::newRow("capped") << 8 << 3 << 0.0 << 3;
        QTest::newRow("cap above cores") << 4 << 16 << 0.0 << 4;
        QTest::newRow("8 cores, 3 busy") << 8 << 0 << 3.0 << 5;
        QTest::newRow("negative noise") << 2 << 0 << -0.3 << 2;
        QTest::newRow("zero cores reported") << 0 << 0 << 0.0 << 1;
    }
    void teamSizeFollowsTheFreeCores() {
        QFETCH(int, cores);
        QFETCH(int, cap);
        QFETCH(double, others);
        QFETCH(int, threads);
        QCOMPARE(cpu::threadsFor(cores, cap, others), threads);
    }

    void capAndAdaptation() {
        const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        initializeRuntime(1);
        QCOMPARE(cpu::threadCap(), 1);
        QCOMPARE(cpu::currentThreads(), 1);
        initializeRuntime(0);
        QCOMPARE(cpu::threadCap(), cores);
        cpu::setAdaptiveThreads(false);
        QCOMPARE(cpu::currentThreads(), cores); // not adaptive: always the cap
        cpu::setAdaptiveThreads(true);
        for (int i = 0; i < 3; ++i) { // adaptive: within [1, cap] whatever the machine does
            const int n = cpu::currentThreads();
            QVERIFY(n >= 1 && n <= cores);
            QTest::qWait(250);
        }
    }

    void workerTeamRunsEveryPartOnce() {
        // Many short steps with changing part counts (the team's workers spin between
        // steps and sleep after a pause), each part adding its own bit.
        for (int step = 0; step < 20000; ++step) {
            const int parts = 1 + step % 5;
            std::vector<std::atomic<int>> hits(static_cast<size_t>(parts));
            std::atomic<int> counts{0}, mismatched{0};
            cpu::runParts(parts, [&](int part, int n) {
                // Every part sees the same count (no QtTest macros off the test thread).
                int expected = 0;
                if (!counts.compare_exchange_strong(expected, n) && expected != n)
                    mismatched.fetch_add(1);
                hits[static_cast<size_t>(part)].fetch_add(1);
            });
            QCOMPARE(mismatched.load(), 0);
            int total = 0;
            for (auto& h : hits) {
                QVERIFY(h.load() <= 1);
                total += h.load();
            }
            // The team may run fewer parts than asked (at most its workers + 1): the
            // caller splits the work by the `n` it is given, so the first n ran once.
            QCOMPARE(total, counts.load());
            QVERIFY(total >= 1 && total <= parts);
            for (int p = 0; p < total; ++p)
                QCOMPARE(hits[static_cast<size_t>(p)].load(), 1);
            if (step % 5000 == 4999)
                QTest::qWait(5); // let the workers fall asleep
        }
    }

    void workerTeamServesTwoCallers() {
        // The app's engine and lab threads may decode at once: the second caller runs
        // its parts itself; both see each part exactly once.
        std::atomic<long> sum{0};
        auto caller = [&] {
            for (int step = 0; step < 5000; ++step) {
                std::atomic<int> ran{0};
                int parts = 0;
                cpu::runParts(4, [&](int, int n) {
                    ran.fetch_add(1);
                    parts = n;
                });
                if (ran.load() != parts)
                    sum.fetch_add(1000000);
                sum.fetch_add(1);
            }
        };
        std::thread a(caller), b(caller);
        a.join();
        b.join();
        QCOMPARE(sum.load(), 10000L);
    }
};

QTEST_GUILESS_MAIN(TestCoreBudget)
#include "tst_core_budget.moc"
