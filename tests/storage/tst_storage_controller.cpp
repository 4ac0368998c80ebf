// The QtCore facade: requests answered asynchronously by queued signals on the
// caller's thread, in order, writes grouped into transactions with one failing
// write not undoing the others, and errors as values.
#include "titled_story.h"

#include <baton/storage/database.h>
#include <baton/storage/qt/storage_controller.h>
#include <baton/storage/state_store.h>
#include <baton/storage/story_store.h>

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace baton::storage;

class TestStorageController : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_tmp.isValid());
    }

    void requestsBeforeOpenFail() {
        StorageController c;
        QSignalSpy failed(&c, &StorageController::failed);
        const quint64 id = c.listStories();
        QVERIFY(failed.wait(5000));
        QCOMPARE(failed.at(0).at(0).toULongLong(), id);
        QCOMPARE(failed.at(0).at(1).value<StorageError>().code, StorageErrorCode::InvalidArgument);
    }

    void corruptFileFailsAsValue() {
        const QString path = m_tmp.path() + "/corrupt.db";
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray(4096, 'x'));
        f.close();
        StorageController c;
        QSignalSpy failed(&c, &StorageController::failed);
        QSignalSpy opened(&c, &StorageController::opened);
        c.open(path);
        QVERIFY(failed.wait(5000));
        QCOMPARE(failed.at(0).at(1).value<StorageError>().code, StorageErrorCode::Corrupt);
        QCOMPARE(opened.count(), 0);
    }

    void storyRoundTrip() {
        const QString path = m_tmp.path() + "/facade.db";
        QThread* const mainThread = QThread::currentThread();
        std::vector<quint64> order;
        bool allOnMainThread = true;
        int committedWrites = 0;
        {
            StorageController c;
            auto note = [&](quint64 id) {
                order.push_back(id);
                allOnMainThread = allOnMainThread && QThread::currentThread() == mainThread;
            };
            QSignalSpy opened(&c, &StorageController::opened);
            QSignalSpy created(&c, &StorageController::storyCreated);
            QSignalSpy appended(&c, &StorageController::passageAppended);
            QSignalSpy failed(&c, &StorageController::failed);
            QSignalSpy loaded(&c, &StorageController::storyLoaded);
            QSignalSpy edited(&c, &StorageController::passageEdited);
            QSignalSpy flushed(&c, &StorageController::flushed);
            QSignalSpy listed(&c, &StorageController::storiesListed);
            connect(&c, &StorageController::passageAppended, this,
                    [&](quint64 id, qint64) { note(id); });
            connect(&c, &StorageController::failed, this,
                    [&](quint64 id, StorageError) { note(id); });
            connect(&c, &StorageController::flushed, this, [&](quint64 id) { note(id); });
            connect(&c, &StorageController::writesCommitted, this,
                    [&](int n) { committedWrites += n; });

            c.open(path);
            QVERIFY(opened.wait(5000));
            QCOMPARE(opened.at(0).at(1).toInt(), currentSchemaVersion());
            Story s;
            s.title = "Facade";
            c.createStory(s);
            QVERIFY(created.wait(5000));
            const qint64 story = created.at(0).at(1).toLongLong();
            QVERIFY(story > 0);

            // Twenty passages queued at once, and one bad request in the middle.
            std::vector<quint64> requests;
            quint64 bad = 0;
            for (int i = 0; i < 20; ++i) {
                requests.push_back(
                    c.appendPassage(story, "chunk" + std::to_string(i) + " ", PassageAuthor::User));
                if (i == 10) {
                    bad = c.appendPassage(987654, "lost", PassageAuthor::Model);
                    requests.push_back(bad);
                }
            }
            const quint64 flush = c.flush();
            QTRY_COMPARE_WITH_TIMEOUT(flushed.count(), 1, 10000);
            QCOMPARE(appended.count(), 20);
            QCOMPARE(failed.count(), 1);
            QCOMPARE(failed.at(0).at(0).toULongLong(), bad);
            QCOMPARE(failed.at(0).at(1).value<StorageError>().code, StorageErrorCode::NotFound);
            requests.push_back(flush);
            QCOMPARE(order, requests); // answered in request order
            QVERIFY(allOnMainThread);

            c.loadStory(story);
            QVERIFY(loaded.wait(5000));
            const auto loadedStory = loaded.at(0).at(1).value<Story>();
            const auto path = loaded.at(0).at(2).value<std::vector<Passage>>();
            QCOMPARE(loadedStory.title, std::string("Facade"));
            QCOMPARE(path.size(), size_t(20));
            std::string text;
            for (const auto& p : path)
                text += p.text;
            QVERIFY(text.rfind("chunk0 chunk1 ", 0) == 0);
            QVERIFY(text.find("lost") == std::string::npos);

            // Editing the 5th passage (no states to invalidate here).
            c.editPassage(path[4].id, "edited ");
            QVERIFY(edited.wait(5000));
            QCOMPARE(edited.at(0).at(1).toLongLong(), qint64(0));

            c.listStories();
            QVERIFY(listed.wait(5000));
            QCOMPARE(listed.at(0).at(1).value<std::vector<Story>>().size(), size_t(1));
            // 1 create + 21 appends + 1 edit were committed in groups.
            QTRY_COMPARE(committedWrites, 23);
        } // the destructor drains and closes

        auto db = Database::open(path.toStdString());
        QVERIFY(db.ok());
        const int64_t story = (*db)->stories().list()->front().id;
        QCOMPARE(*(*db)->stories().passageCount(story), int64_t(20));
        QCOMPARE(*(*db)->integrityCheck(), std::string("ok"));
    }

    // What the app needs beyond appending: fields changed one request at a time (none
    // undoing another), the current leaf moved, and delete.
    void editingRequestsForTheApp() {
        const QString path = m_tmp.path() + "/app.db";
        StorageController c;
        QSignalSpy failed(&c, &StorageController::failed);
        QSignalSpy created(&c, &StorageController::storyCreated);
        QSignalSpy updated(&c, &StorageController::storyUpdated);
        QSignalSpy appended(&c, &StorageController::passageAppended);
        QSignalSpy current(&c, &StorageController::currentPassageSet);
        QSignalSpy deleted(&c, &StorageController::storyDeleted);
        QSignalSpy listed(&c, &StorageController::storiesListed);
        c.open(path);
        c.createStory(titled("Before"));
        QVERIFY(created.wait(5000));
        const qint64 story = created.at(0).at(1).toLongLong();

        c.appendPassage(story, "Once. ", PassageAuthor::User);
        c.appendPassage(story, "Twice. ", PassageAuthor::User);
        QTRY_COMPARE_WITH_TIMEOUT(appended.count(), 2, 5000);
        const qint64 first = appended.at(0).at(1).toLongLong();
        c.setCurrentPassage(story, first);
        QVERIFY(current.wait(5000));
        QCOMPARE(current.at(0).at(2).toLongLong(), first);
        // A passage of no story cannot become current.
        const quint64 bad = c.setCurrentPassage(story, 987654);
        QVERIFY(failed.wait(5000));
        QCOMPARE(failed.at(0).at(0).toULongLong(), bad);

        // Title, settings, memory and note, each in its own request: the list has all.
        StoryChange title, settings, notes;
        title.title = "After";
        settings.settingsJson = R"({"temperature":0.5})";
        notes.memory = "The memory.";
        notes.authorsNote = "The note.";
        c.updateStory(story, title);
        c.updateStory(story, settings);
        c.updateStory(story, notes);
        QTRY_COMPARE_WITH_TIMEOUT(updated.count(), 3, 5000);
        QCOMPARE(updated.at(0).at(1).toLongLong(), story);
        c.listStories();
        QVERIFY(listed.wait(5000));
        const Story after = listed.at(0).at(1).value<std::vector<Story>>().at(0);
        QCOMPARE(after.title, std::string("After"));
        QCOMPARE(after.settingsJson, std::string(R"({"temperature":0.5})"));
        QCOMPARE(after.memory, std::string("The memory."));
        QCOMPARE(after.authorsNote, std::string("The note."));
        QCOMPARE(after.currentPassageId, first);
        c.deleteStory(story);
        QVERIFY(deleted.wait(5000));
        QCOMPARE(deleted.at(0).at(1).toLongLong(), story);
        c.listStories();
        QVERIFY(listed.wait(5000));
        QVERIFY(listed.at(1).at(1).value<std::vector<Story>>().empty());
        const quint64 gone = c.deleteStory(story);
        QVERIFY(failed.wait(5000));
        QCOMPARE(failed.at(1).at(0).toULongLong(), gone);
        QCOMPARE(failed.at(1).at(1).value<StorageError>().code, StorageErrorCode::NotFound);
    }

    // The requests answered by callbacks: in request order with the signals, on the
    // caller's thread; an error goes to failed() and the error callback only; nothing
    // is called for a context that is gone.
    void callbackRequestsAnswerInOrderOnTheCallersThread() {
        StorageController c;
        QSignalSpy opened(&c, &StorageController::opened);
        QSignalSpy failed(&c, &StorageController::failed);
        QSignalSpy created(&c, &StorageController::storyCreated);
        c.open(m_tmp.path() + "/call.db");
        QVERIFY(opened.wait(5000));
        std::vector<QString> order;
        QThread* const mainThread = QThread::currentThread();
        bool onMain = true;
        c.createStory(titled("First"));
        QObject alive;
        c.searchStories("first", &alive, [&](std::vector<int64_t> ids) {
            onMain = onMain && QThread::currentThread() == mainThread;
            order.push_back(QString("found %1").arg(ids.size()));
        });
        std::vector<StorageErrorCode> errors;
        const quint64 bad = c.duplicateStory(
            424242, "x", &alive, [&](int64_t) { order.push_back("wrong"); },
            [&](const StorageError& e) {
                onMain = onMain && QThread::currentThread() == mainThread;
                errors.push_back(e.code);
            });
        auto* gone = new QObject;
        c.currentPath(1, gone, [&](std::vector<Passage>) { order.push_back("gone"); });
        delete gone;
        c.duplicateStory(1, "Copy", &alive,
                         [&](int64_t id) { order.push_back(QString("copied %1").arg(id > 1)); });
        c.allPassages(1, &alive, [&](std::vector<Passage> all) {
            order.push_back(QString("passages %1").arg(all.size()));
        });
        QSignalSpy flushed(&c, &StorageController::flushed);
        c.flush();
        QVERIFY(flushed.wait(5000));
        QCOMPARE(created.count(), 1);
        QCOMPARE(order, (std::vector<QString>{"found 1", "copied 1", "passages 0"}));
        QVERIFY(onMain);
        QCOMPARE(failed.count(), 1);
        QCOMPARE(failed.at(0).at(0).toULongLong(), bad);
        QCOMPARE(errors, (std::vector<StorageErrorCode>{StorageErrorCode::NotFound}));
    }

    // The lab pages' requests: models (the bundled ones registered, the first the
    // default), evaluation results, books, training runs and topic models.
    void labRequests() {
        StorageController c;
        QSignalSpy opened(&c, &StorageController::opened);
        c.open(m_tmp.path() + "/lab.db");
        QVERIFY(opened.wait(5000));
        QObject ctx;
        std::vector<RegisteredModel> models;
        auto wait = [&] {
            QSignalSpy flushed(&c, &StorageController::flushed);
            c.flush();
            QVERIFY(flushed.wait(5000));
        };
        c.listModels({"/bundled/mini", "/bundled/base"}, &ctx,
                     [&](std::vector<RegisteredModel> v) { models = std::move(v); });
        wait();
        QCOMPARE(models.size(), size_t(2));
        int64_t mini = 0;
        for (const auto& m : models)
            if (m.path == "/bundled/mini") {
                QVERIFY(m.isDefault);
                QCOMPARE(m.name, std::string("mini"));
                mini = m.id;
            }
        int64_t mine = 0;
        c.registerModel({0, "/models/mine", "Mine", "abc"}, &ctx, [&](int64_t id) { mine = id; });
        c.registerModel({0, "/models/mine", "Mine, renamed", "abc", R"({"adapter_base":"/b"})"},
                        &ctx, [&](int64_t id) { QCOMPARE(id, mine); });
        wait();
        c.setDefaultModel(mine, &ctx, {});
        c.removeModel(mini, &ctx, {});
        c.listModels({}, &ctx, [&](std::vector<RegisteredModel> v) { models = std::move(v); });
        wait();
        QCOMPARE(models.size(), size_t(2));
        for (const auto& m : models)
            if (m.id == mine) {
                QVERIFY(m.isDefault);
                QCOMPARE(m.name, std::string("Mine, renamed"));
                QCOMPARE(m.configJson, std::string(R"({"adapter_base":"/b"})"));
            }

        EvalResult e;
        e.modelPath = "/models/mine";
        e.textId = "emma";
        e.textHash = "h";
        e.window = 16;
        std::vector<EvalResult> evals;
        c.addEvalResult(e, &ctx, {});
        c.listEvalResults(&ctx, [&](std::vector<EvalResult> v) { evals = std::move(v); });
        std::vector<Book> listed, texts;
        c.addBooks({Book{0, "Emma", "", "s1", "Emma Woodhouse.", 0, 0},
                    Book{0, "Persuasion", "", "s2", "Sir Walter.", 0, 0}},
                   &ctx, {});
        c.listBooks(&ctx, [&](std::vector<Book> v) { listed = std::move(v); });
        c.bookTexts({}, &ctx, [&](std::vector<Book> v) { texts = std::move(v); });
        wait();
        QCOMPARE(evals.size(), size_t(1));
        QCOMPARE(listed.size(), size_t(2));
        QVERIFY(listed[0].text.empty());
        QCOMPARE(texts.size(), size_t(2));
        QCOMPARE(texts[0].text, std::string("Emma Woodhouse."));
        c.bookTexts({listed[1].id}, &ctx, [&](std::vector<Book> v) { texts = std::move(v); });
        c.removeBooks({listed[0].id}, &ctx, {});
        c.listBooks(&ctx, [&](std::vector<Book> v) { listed = std::move(v); });
        wait();
        QCOMPARE(texts.size(), size_t(1));
        QCOMPARE(listed.size(), size_t(1));

        TrainingRun run;
        run.configJson = R"({"steps":2})";
        int64_t runId = 0;
        c.createRun(run, &ctx, [&](int64_t id) { runId = id; });
        wait();
        std::vector<MetricPoint> points;
        c.addMetrics({{runId, 1, "train_loss", 5.0}}, &ctx, {});
        c.resumeRun(runId, &ctx, [&](std::vector<MetricPoint> v) { points = std::move(v); });
        c.finishRun(runId, {{runId, 2, "train_loss", 4.0}}, "/runs/a/model", RunStatus::Completed,
                    "finished", &ctx, {});
        std::vector<TrainingRun> runs;
        c.listRuns(&ctx, [&](std::vector<TrainingRun> v) { runs = std::move(v); });
        TopicModelRecord topics;
        topics.path = "/topics/a.json";
        topics.name = "A";
        topics.topics = 4;
        topics.vocabularySize = 100;
        c.registerTopicModel(topics, &ctx, {});
        std::vector<TopicModelRecord> topicModels;
        c.listTopicModels(&ctx,
                          [&](std::vector<TopicModelRecord> v) { topicModels = std::move(v); });
        wait();
        QCOMPARE(points.size(), size_t(1));
        QCOMPARE(runs.size(), size_t(1));
        QCOMPARE(runs[0].status, RunStatus::Completed);
        QCOMPARE(runs[0].checkpointPaths, std::vector<std::string>{"/runs/a/model"});
        QCOMPARE(topicModels.size(), size_t(1));
        QCOMPARE(topicModels[0].vocabularySize, 100);
    }

    void errorCallbacksNeedTheirContext() {
        StorageController c;
        QSignalSpy failed(&c, &StorageController::failed);
        int called = 0;
        auto* gone = new QObject;
        c.currentPath(
            1, gone, [&](std::vector<Passage>) { ++called; },
            [&](const StorageError&) { ++called; });
        delete gone;
        QVERIFY(failed.wait(5000)); // no database is open
        QCOMPARE(failed.at(0).at(1).value<StorageError>().code, StorageErrorCode::InvalidArgument);
        QCoreApplication::processEvents();
        QCOMPARE(called, 0);
    }

    void destructorFlushesQueuedWrites() {
        const QString path = m_tmp.path() + "/flush.db";
        {
            StorageController c;
            c.open(path);
            c.createStory(titled("Queued"));
            // No waiting: the controller is destroyed with the requests queued.
        }
        auto db = Database::open(path.toStdString());
        QVERIFY(db.ok());
        QCOMPARE((*db)->stories().list()->size(), size_t(1));
    }
};

QTEST_GUILESS_MAIN(TestStorageController)
#include "tst_storage_controller.moc"
