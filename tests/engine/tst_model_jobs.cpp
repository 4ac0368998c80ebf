// The Qt adapter of the model queue (engine/qt/model_jobs.h): a job's value, error,
// progress and reports come back on the caller's thread, in order; a receiver deleted
// meanwhile hears nothing; a load updates model() and says so.
#include "test_support.h"
#include "verify_ok.h"

#include <baton/engine/qt/model_jobs.h>

#include <QSignalSpy>
#include <QThread>
#include <QtTest>

#include <thread>

using namespace baton::engine;

class TestModelJobs : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { baton::test::initTestProcess(); }

    void aValueOrAnErrorOnTheCallersThread() {
        ModelJobs jobs;
        QObject receiver;
        std::optional<int> value;
        QThread* doneOn = nullptr;
        QThread* jobOn = nullptr;
        jobs.run<int>(
            &receiver,
            [&](JobContext&) -> Result<int> {
                jobOn = QThread::currentThread();
                return 42;
            },
            [&](int v) {
                value = v;
                doneOn = QThread::currentThread();
            });
        QTRY_VERIFY(value.has_value());
        QCOMPARE(*value, 42);
        QCOMPARE(doneOn, QThread::currentThread());
        QVERIFY(jobOn != QThread::currentThread());
        std::optional<Error> error;
        jobs.run<int>(
            &receiver,
            [](JobContext&) -> Result<int> { return makeError(ErrorCode::InvalidArgument, "no"); },
            [](int) { QFAIL("a failed job has no value"); }, [&](const Error& e) { error = e; });
        QTRY_VERIFY(error.has_value());
        QCOMPARE(error->code, ErrorCode::InvalidArgument);
    }

    void reportsAndProgressComeInOrderBeforeDone() {
        ModelJobs jobs;
        QObject receiver;
        std::vector<int> seen;
        double lastProgress = -1;
        bool done = false;
        jobs.stream<std::string, int>(
            &receiver,
            [](JobContext& c, const std::function<void(int)>& report) -> Result<std::string> {
                for (int i = 0; i < 100; ++i) {
                    report(i);
                    c.progress(double(i + 1) / 100, "step");
                }
                return std::string("end");
            },
            [&](int i) {
                QVERIFY(!done);
                seen.push_back(i);
            },
            [&](std::string s) {
                QCOMPARE(s, std::string("end"));
                QCOMPARE(seen.size(), size_t(100));
                QCOMPARE(lastProgress, 1.0);
                done = true;
            },
            {}, [&](double f, const QString&) { lastProgress = f; });
        QTRY_VERIFY(done);
        for (int i = 0; i < 100; ++i)
            QCOMPARE(seen[size_t(i)], i);
    }

    void aReceiverThatIsGoneHearsNothing() {
        ModelJobs jobs;
        auto* receiver = new QObject;
        bool called = false;
        std::atomic<bool> go{false};
        jobs.run<int>(
            receiver,
            [&](JobContext&) -> Result<int> {
                while (!go)
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                return 1;
            },
            [&](int) { called = true; }, [&](const Error&) { called = true; });
        delete receiver;
        go = true;
        bool after = false;
        QObject other;
        jobs.run<int>(
            &other, [](JobContext&) -> Result<int> { return 2; }, [&](int) { after = true; });
        QTRY_VERIFY(after);
        QVERIFY(!called);
    }

    void cancelledWhileQueued() {
        ModelJobs jobs;
        QObject receiver;
        std::atomic<bool> go{false};
        jobs.run<int>(
            &receiver,
            [&](JobContext&) -> Result<int> {
                while (!go)
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                return 1;
            },
            [](int) {});
        bool ran = false;
        std::optional<Error> error;
        const JobId second = jobs.run<int>(
            &receiver,
            [&](JobContext&) -> Result<int> {
                ran = true;
                return 2;
            },
            [](int) {}, [&](const Error& e) { error = e; });
        jobs.cancel(second);
        go = true;
        QTRY_VERIFY(error.has_value());
        QCOMPARE(error->code, ErrorCode::Cancelled);
        QVERIFY(!ran);
    }

    void aLoadUpdatesTheModel() {
        ModelJobs jobs;
        QObject receiver;
        QSignalSpy loaded(&jobs, &ModelJobs::modelLoaded);
        std::optional<ModelInfo> info;
        jobs.load(&receiver, baton::test::fixtureDir(), {}, [&](const ModelInfo& i) { info = i; });
        QTRY_VERIFY_WITH_TIMEOUT(info.has_value(), 60000);
        QCOMPARE(loaded.count(), 1);
        QVERIFY(jobs.model().has_value());
        QCOMPARE(jobs.model()->path, info->path);
        QVERIFY(jobs.queue().current());
        std::optional<Error> error;
        jobs.load(
            &receiver, QStringLiteral("/nonexistent"), {}, [](const ModelInfo&) {},
            [&](const Error& e) { error = e; });
        QTRY_VERIFY(error.has_value());
        QCOMPARE(loaded.count(), 1);
        QCOMPARE(jobs.model()->path, info->path); // the model stays
    }
};

QTEST_GUILESS_MAIN(TestModelJobs)
#include "tst_model_jobs.moc"
