// The engine's Qt facade: jobs run off the GUI thread in FIFO order, stream
// throttled progress, can be cancelled (queued or running), continue generation
// from a returned state exactly, and always end with one jobFinished.
#include "test_support.h"

#include <baton/engine/engine_controller.h>

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

using namespace baton::engine;

namespace {

SamplingOptions greedy(int tokens) {
    SamplingOptions o;
    o.temperature = 0;
    o.maxTokens = tokens;
    o.stopAtEndOfText = false;
    return o;
}

// Waits until jobFinished arrived for `job`; returns its ok flag and error.
std::pair<bool, Error> waitFor(QSignalSpy& finished, JobId job, int timeoutMs = 120000) {
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < timeoutMs) {
        for (const auto& args : finished)
            if (args.at(0).value<JobId>() == job)
                return {args.at(1).toBool(), args.at(2).value<Error>()};
        finished.wait(200);
    }
    return {false, Error{ErrorCode::Internal, "timed out"}};
}

} // namespace

class TestEngineController : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;

    // Loads the fixture; returns false on failure.
    static bool load(EngineController& c) {
        QSignalSpy finished(&c, &EngineController::jobFinished);
        const JobId job = c.loadModel(baton::test::fixtureDir());
        return waitFor(finished, job).first;
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        QVERIFY2(QFile::exists(baton::test::fixtureDir() + "/config.json"),
                 qPrintable(baton::test::missingMessage(baton::test::fixtureDir())));
    }

    void loadReportsProgressAndInfo() {
        EngineController c;
        QSignalSpy started(&c, &EngineController::jobStarted);
        QSignalSpy progress(&c, &EngineController::jobProgress);
        QSignalSpy loaded(&c, &EngineController::modelLoaded);
        QSignalSpy finished(&c, &EngineController::jobFinished);
        const JobId job = c.loadModel(baton::test::fixtureDir());
        QCOMPARE(c.pendingJobs(), 1);
        const auto [ok, error] = waitFor(finished, job);
        QVERIFY2(ok, error.message.c_str());
        QCOMPARE(started.size(), 1);
        QVERIFY(progress.size() >= 1);
        QCOMPARE(loaded.size(), 1);
        QCOMPARE(loaded[0][1].value<ModelInfo>().config.nLayer, 2);
        QVERIFY(c.model().has_value());
        QCOMPARE(c.pendingJobs(), 0);
        // A folder that is not a model: a clear error, and the loaded model stays.
        const JobId bad = c.loadModel(m_tmp.filePath("nothing-here"));
        const auto [ok2, error2] = waitFor(finished, bad);
        QVERIFY(!ok2);
        QCOMPARE(error2.code, ErrorCode::FileNotFound);
        QCOMPARE(c.model()->config.nLayer, 2);
    }

    void generationStreamsChunksAndContinuesExactly() {
        // The reference: 30 greedy tokens in one go.
        EngineController c;
        QVERIFY(load(c));
        QSignalSpy finished(&c, &EngineController::jobFinished);
        QSignalSpy done(&c, &EngineController::generationDone);
        QSignalSpy progress(&c, &EngineController::generationProgress);
        QSignalSpy chunks(&c, &EngineController::generationChunk);
        GenerateRequest r;
        r.text = "It is a truth universally acknowledged";
        r.sampling = greedy(30);
        r.chunkTokens = 8;
        const JobId all = c.generate(r);
        QVERIFY(waitFor(finished, all).first);
        QCOMPARE(done.size(), 1);
        const GenerationDone whole = done[0][1].value<GenerationDone>();
        QCOMPARE(whole.result.tokens.size(), size_t(30));
        QVERIFY(!whole.state.empty());
        // The streamed pieces and the chunks both add up to the text.
        std::string streamed, chunked;
        for (const auto& p : progress)
            streamed += p[1].value<GenerationProgress>().text;
        for (const auto& ch : chunks)
            chunked += ch[1].value<StateChunk>().text;
        QCOMPARE(QString::fromStdString(streamed), QString::fromStdString(whole.result.text));
        QCOMPARE(QString::fromStdString(chunked), QString::fromStdString(whole.result.text));
        QVERIFY(chunks.size() >= 3);
        QVERIFY(!chunks[0][1].value<StateChunk>().state.empty());

        // 12 tokens, then 18 more from the returned state: in the same controller
        // (the live generator is reused) and in a fresh one (the state is imported).
        for (bool fresh : {false, true}) {
            EngineController a;
            QVERIFY(load(a));
            QSignalSpy f(&a, &EngineController::jobFinished);
            QSignalSpy d(&a, &EngineController::generationDone);
            GenerateRequest first = r;
            first.sampling = greedy(12);
            QVERIFY(waitFor(f, a.generate(first)).first);
            const GenerationDone part1 = d[0][1].value<GenerationDone>();
            EngineController b;
            EngineController& next = fresh ? b : a;
            if (fresh)
                QVERIFY(load(b));
            QSignalSpy f2(&next, &EngineController::jobFinished);
            QSignalSpy d2(&next, &EngineController::generationDone);
            GenerateRequest second;
            second.state = part1.state;
            second.sampling = greedy(18);
            QVERIFY(waitFor(f2, next.generate(second)).first);
            std::vector<int32_t> joined = part1.result.tokens;
            const auto rest = d2.last()[1].value<GenerationDone>().result.tokens;
            joined.insert(joined.end(), rest.begin(), rest.end());
            QCOMPARE(joined, whole.result.tokens);
        }
    }

    void startOfTextPrecedesTheText() {
        // With startOfText the stream is one token longer: the model's start-of-text
        // token comes before the text (as baton-cli story generate encodes a story).
        EngineController c;
        QVERIFY(load(c));
        QSignalSpy finished(&c, &EngineController::jobFinished);
        QSignalSpy progress(&c, &EngineController::generationProgress);
        GenerateRequest r;
        r.text = "It is a truth universally acknowledged";
        r.sampling = greedy(4);
        QVERIFY(waitFor(finished, c.generate(r)).first);
        const int64_t without = progress.last()[1].value<GenerationProgress>().streamLength;
        r.startOfText = true;
        QVERIFY(waitFor(finished, c.generate(r)).first);
        QCOMPARE(progress.last()[1].value<GenerationProgress>().streamLength, without + 1);
    }

    void jobsRunInOrderAndCancelQueuedAndRunning() {
        EngineController c;
        QVERIFY(load(c));
        QSignalSpy started(&c, &EngineController::jobStarted);
        QSignalSpy finished(&c, &EngineController::jobFinished);
        QSignalSpy progress(&c, &EngineController::generationProgress);
        QSignalSpy done(&c, &EngineController::generationDone);
        GenerateRequest longRun;
        longRun.text = "Once";
        longRun.sampling = greedy(100000);
        const JobId running = c.generate(longRun);
        const JobId queued = c.generate(longRun);
        EvaluateRequest eval;
        eval.text = "A short text to score in windows of eight tokens, twice.";
        eval.settings = {{8, 0}, {8, 2}};
        const JobId third = c.evaluate(eval);
        QCOMPARE(c.pendingJobs(), 3);
        c.cancel(queued); // before it starts
        QVERIFY(progress.wait(60000));
        c.cancel(running); // while it runs
        const auto [okRun, errRun] = waitFor(finished, running);
        QVERIFY2(okRun, errRun.message.c_str()); // a stopped generation keeps its text
        QCOMPARE(done.size(), 1);
        const GenerationDone stopped = done[0][1].value<GenerationDone>();
        QCOMPARE(stopped.result.reason, StopReason::Cancelled);
        QVERIFY(stopped.result.tokens.size() < 100000);
        const auto [okQueued, errQueued] = waitFor(finished, queued);
        QVERIFY(!okQueued);
        QCOMPARE(errQueued.code, ErrorCode::Cancelled);
        QVERIFY(waitFor(finished, third).first);
        QCOMPARE(done.size(), 1); // the queued generation never generated
        // FIFO: started in the order they were queued.
        QCOMPARE(started.size(), 3);
        QCOMPARE(started[0][0].value<JobId>(), running);
        QCOMPARE(started[1][0].value<JobId>(), queued);
        QCOMPARE(started[2][0].value<JobId>(), third);
        QCOMPARE(c.pendingJobs(), 0);
    }

    void evaluateTrainAndFitTopics() {
        EngineController c;
        QSignalSpy finished(&c, &EngineController::jobFinished);
        // Without a model, evaluation and generation are refused clearly.
        EvaluateRequest eval;
        eval.text = baton::test::readFile(baton::test::fixtureDir() + "/text.txt").toStdString();
        eval.settings = {{32, 0}, {32, 8}};
        const auto [okNo, errNo] = waitFor(finished, c.evaluate(eval));
        QVERIFY(!okNo);
        QCOMPARE(errNo.code, ErrorCode::InvalidArgument);
        QVERIFY(load(c));
        QSignalSpy rows(&c, &EngineController::evaluationRow);
        QVERIFY(waitFor(finished, c.evaluate(eval)).first);
        QCOMPARE(rows.size(), 2);
        QCOMPARE(rows[1][1].value<ScoreResult>().windows.overlap, 8);
        QVERIFY(rows[0][1].value<ScoreResult>().nllSum > 0);

        // Training: a tiny fine-tune on the fixture, with events, to the end.
        const QString corpus = m_tmp.filePath("corpus.txt");
        const QByteArray book =
            baton::test::readFile(baton::test::sharedPath("corpus/books/austen-emma.txt"));
        QVERIFY(!book.isEmpty());
        QVERIFY(baton::test::writeFile(corpus, book.mid(10000, 20000)));
        TrainConfig t;
        t.outDir = m_tmp.filePath("run").toStdString();
        t.baseModel = baton::test::fixture();
        t.mode = TrainMode::Baseline;
        t.corpus = {corpus.toStdString()};
        t.validationFraction = 0;
        t.window = 16;
        t.bpttWindows = 2;
        t.batchSize = 2;
        t.steps = 3;
        t.validateEveryTokens = 0;
        QSignalSpy events(&c, &EngineController::trainingEvent);
        const auto [okTrain, errTrain] = waitFor(finished, c.train(t));
        QVERIFY2(okTrain, errTrain.message.c_str());
        int steps = 0;
        for (const auto& e : events)
            steps += e[1].value<TrainEvent>().kind == TrainEvent::Kind::Step;
        QCOMPARE(steps, 3);
        QVERIFY(QFile::exists(m_tmp.filePath("run/model/model.safetensors")));

        // Topics: fitted and saved where asked.
        TopicsRequest topics;
        topics.texts = {book.left(200000).toStdString()};
        topics.options.topics = 3;
        topics.options.iterations = 20;
        topics.options.chunkWords = 300;
        topics.outPath = m_tmp.filePath("topics.json").toStdString();
        QSignalSpy fitted(&c, &EngineController::topicsFitted);
        QVERIFY(waitFor(finished, c.fitTopics(topics)).first);
        QCOMPARE(fitted.size(), 1);
        QVERIFY(TopicModel::load(topics.outPath).ok());
    }

    // The memory probe as a job: refused without a model and for a text too short for
    // its distances; otherwise one cell per distance (a baseline model: state "off").
    void probeReportsCellsAndRefusesWhatItCannotDo() {
        EngineController c;
        QSignalSpy finished(&c, &EngineController::jobFinished);
        QSignalSpy probed(&c, &EngineController::probed);
        const std::string book =
            baton::test::readFile(baton::test::sharedPath("corpus/books/austen-emma.txt"))
                .mid(30000, 60000)
                .toStdString();
        QVERIFY(!book.empty());
        ProbeOptions options;
        options.windows = {32, 0};
        options.episodes = 6;
        const auto [okNo, errNo] = waitFor(finished, c.probe({book}, options));
        QVERIFY(!okNo);
        QCOMPARE(errNo.code, ErrorCode::InvalidArgument);
        QCOMPARE(errNo.message, std::string("no model is loaded"));
        QVERIFY(load(c));
        const auto [okShort, errShort] =
            waitFor(finished, c.probe({"Emma was not a short story at all."}, options));
        QVERIFY(!okShort);
        QCOMPARE(errShort.code, ErrorCode::InvalidArgument);
        QVERIFY2(errShort.message.find("too short") != std::string::npos, errShort.message.c_str());
        QCOMPARE(probed.size(), 0);
        QSignalSpy progress(&c, &EngineController::jobProgress);
        const JobId job = c.probe({book}, options);
        const auto [ok, error] = waitFor(finished, job);
        QVERIFY2(ok, error.message.c_str());
        QCOMPARE(probed.size(), 1);
        QCOMPARE(probed[0][0].value<JobId>(), job);
        const auto result = probed[0][1].value<ProbeResult>();
        QCOMPARE(result.cells.size(), options.distances.size());
        for (size_t i = 0; i < result.cells.size(); ++i) {
            QCOMPARE(result.cells[i].distance, options.distances[i]);
            QCOMPARE(result.cells[i].episodes, 6);
        }
        QVERIFY(!progress.isEmpty());
        QCOMPARE(progress.last()[1].toDouble(), 1.0);
    }

    void destroyingWhileBusyCancelsAndReturns() {
        QElapsedTimer t;
        t.start();
        {
            EngineController c;
            QVERIFY(load(c));
            QSignalSpy progress(&c, &EngineController::generationProgress);
            GenerateRequest r;
            r.sampling = greedy(1000000);
            c.generate(r);
            c.generate(r);
            QVERIFY(progress.wait(60000));
        } // the destructor cancels both and joins the engine thread
        QVERIFY(t.elapsed() < 60000);
    }
};

QTEST_GUILESS_MAIN(TestEngineController)
#include "tst_engine_controller.moc"
