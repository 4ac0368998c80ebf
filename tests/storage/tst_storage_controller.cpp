// The QtCore facade: requests answered asynchronously by queued signals on the
// caller's thread, in order, writes grouped into transactions with one failing
// write not undoing the others, and errors as values.
#include "titled_story.h"

#include <baton/storage/database.h>
#include <baton/storage/state_store.h>
#include <baton/storage/storage_controller.h>
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

            // Twenty chunks queued at once, every other one with a state, and one bad
            // request in the middle.
            std::vector<quint64> requests;
            quint64 bad = 0;
            for (int i = 0; i < 20; ++i) {
                std::optional<StoredState> state;
                if (i % 2 == 0) {
                    StoredState st;
                    st.tokenOffset = i;
                    st.modelIdentity = "m";
                    st.window = 16;
                    st.formatVersion = 1;
                    st.blob.assign(100, static_cast<uint8_t>(i));
                    state = st;
                }
                requests.push_back(c.appendPassage(story, "chunk" + std::to_string(i) + " ",
                                                   PassageAuthor::Model, state));
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

            // Editing the 5th passage invalidates the states of passages 5..19 that
            // had one: 4, 6, ..., 18 -> indices 4..19 even = 8 states.
            c.editPassage(path[4].id, "edited ");
            QVERIFY(edited.wait(5000));
            QCOMPARE(edited.at(0).at(1).toLongLong(), qint64(8));

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
        QCOMPARE(*(*db)->states().countForStory(story), int64_t(2)); // chunk0 and chunk2
        QCOMPARE(*(*db)->integrityCheck(), std::string("ok"));
    }

    // What the app needs beyond appending: rename, the current leaf moved for a retry,
    // the resume point (path + latest matching state), one state per window kept
    // while chunks stream in, and delete.
    void editingRequestsForTheApp() {
        const QString path = m_tmp.path() + "/app.db";
        StorageController c;
        QSignalSpy failed(&c, &StorageController::failed);
        QSignalSpy created(&c, &StorageController::storyCreated);
        QSignalSpy updated(&c, &StorageController::storyUpdated);
        QSignalSpy appended(&c, &StorageController::passageAppended);
        QSignalSpy current(&c, &StorageController::currentPassageSet);
        QSignalSpy resume(&c, &StorageController::resumePointReady);
        QSignalSpy deleted(&c, &StorageController::storyDeleted);
        QSignalSpy listed(&c, &StorageController::storiesListed);
        c.open(path);
        c.createStory(titled("Before"));
        QVERIFY(created.wait(5000));
        const qint64 story = created.at(0).at(1).toLongLong();

        // A story without passages resumes from nothing.
        c.resumePoint(story, "m", 16, 4, 1);
        QVERIFY(resume.wait(5000));
        QCOMPARE(resume.at(0).at(1).toLongLong(), story);
        auto point = resume.at(0).at(2).value<ResumePoint>();
        QVERIFY(point.path.empty());
        QVERIFY(!point.hasState());

        // A user passage, then four chunks in window 0 and one in window 1, each with
        // a state, pruned as they come: window 0 keeps only its last state.
        c.appendPassage(story, "Once. ", PassageAuthor::User);
        auto state = [](int64_t window, uint8_t fill) {
            StoredState st;
            st.windowIndex = window;
            st.tokenOffset = window * 12 + fill;
            st.modelIdentity = "m";
            st.window = 16;
            st.overlap = 4;
            st.formatVersion = 1;
            st.blob.assign(64, fill);
            return st;
        };
        for (uint8_t i = 1; i <= 4; ++i)
            c.appendPassage(story, "c" + std::to_string(i) + " ", PassageAuthor::Model, state(0, i),
                            true);
        c.appendPassage(story, "c5 ", PassageAuthor::Model, state(1, 5), true);
        c.appendPassage(story, "typed ", PassageAuthor::User);
        c.resumePoint(story, "m", 16, 4, 1);
        QVERIFY(resume.wait(5000));
        QCOMPARE(appended.count(), 7);
        point = resume.at(1).at(2).value<ResumePoint>();
        QCOMPARE(point.path.size(), size_t(7));
        QVERIFY(point.hasState());
        QCOMPARE(point.state.passageId, point.path[5].id);
        QCOMPARE(point.state.blob, std::vector<uint8_t>(64, 5));
        QCOMPARE(point.textAfterState(), std::string("typed "));
        // Another model, T or o: no state, the whole text.
        c.resumePoint(story, "other", 16, 4, 1);
        QVERIFY(resume.wait(5000));
        point = resume.at(2).at(2).value<ResumePoint>();
        QVERIFY(!point.hasState());
        QCOMPARE(point.textAfterState(), std::string("Once. c1 c2 c3 c4 c5 typed "));
        {
            auto db = Database::open(path.toStdString());
            QVERIFY(db.ok());
            QCOMPARE(*(*db)->states().countForStory(story), int64_t(2)); // c4 and c5
        }

        // A retry: the current leaf moves to the user passage and the next append is
        // an alternative to c1; resuming there finds no state (c1..c5 are elsewhere).
        const qint64 userPassage = point.path[0].id;
        c.setCurrentPassage(story, userPassage);
        c.appendPassage(story, "alt ", PassageAuthor::Model);
        c.resumePoint(story, "m", 16, 4, 1);
        QVERIFY(resume.wait(5000));
        QCOMPARE(current.count(), 1);
        QCOMPARE(current.at(0).at(2).toLongLong(), userPassage);
        point = resume.at(3).at(2).value<ResumePoint>();
        QCOMPARE(point.path.size(), size_t(2));
        QCOMPARE(point.path[1].text, std::string("alt "));
        QCOMPARE(point.path[1].parentId, userPassage);
        QVERIFY(!point.hasState());
        // A passage of no story cannot become current.
        const quint64 bad = c.setCurrentPassage(story, 987654);
        QVERIFY(failed.wait(5000));
        QCOMPARE(failed.at(0).at(0).toULongLong(), bad);

        // Rename and new settings (neither undoes the other), then delete: the list
        // follows.
        c.renameStory(story, "After");
        c.setStorySettings(story, R"({"temperature":0.5})");
        QTRY_COMPARE_WITH_TIMEOUT(updated.count(), 2, 5000);
        QCOMPARE(updated.at(0).at(1).toLongLong(), story);
        c.listStories();
        QVERIFY(listed.wait(5000));
        const Story after = listed.at(0).at(1).value<std::vector<Story>>().at(0);
        QCOMPARE(after.title, std::string("After"));
        QCOMPARE(after.settingsJson, std::string(R"({"temperature":0.5})"));
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

    void genericCallsAnswerInOrderOnTheCallersThread() {
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
        c.call<std::vector<Story>>(
            false, [](Database& db) { return db.stories().list(); }, &alive,
            [&](std::vector<Story> v) {
                onMain = onMain && QThread::currentThread() == mainThread;
                order.push_back(QString("list %1").arg(v.size()));
            });
        // An error is answered by failed() and the error callback, and `done` is not
        // called.
        std::vector<StorageErrorCode> errors;
        const quint64 bad = c.call<Story>(
            false, [](Database& db) { return db.stories().get(424242); }, &alive,
            [&](Story) { order.push_back("wrong"); },
            [&](const StorageError& e) {
                onMain = onMain && QThread::currentThread() == mainThread;
                errors.push_back(e.code);
            });
        // A context deleted before the answer: `done` is not called.
        auto* gone = new QObject;
        c.call<int64_t>(
            true, [](Database& db) { return db.stories().passageCount(1); }, gone,
            [&](int64_t) { order.push_back("gone"); });
        delete gone;
        c.call<int64_t>(
            true, [](Database& db) { return db.stories().create(titled("Second")); }, &alive,
            [&](int64_t id) { order.push_back(QString("created %1").arg(id > 0)); });
        QSignalSpy flushed(&c, &StorageController::flushed);
        c.flush();
        QVERIFY(flushed.wait(5000));
        QCOMPARE(created.count(), 1);
        QCOMPARE(order, (std::vector<QString>{"list 1", "created 1"}));
        QVERIFY(onMain);
        QCOMPARE(failed.count(), 1);
        QCOMPARE(failed.at(0).at(0).toULongLong(), bad);
        QCOMPARE(failed.at(0).at(1).value<StorageError>().code, StorageErrorCode::NotFound);
        QCOMPARE(errors, (std::vector<StorageErrorCode>{StorageErrorCode::NotFound}));
    }

    void errorCallbacksNeedTheirContext() {
        StorageController c;
        QSignalSpy failed(&c, &StorageController::failed);
        int called = 0;
        auto* gone = new QObject;
        c.call<Story>(
            false, [](Database& db) { return db.stories().get(1); }, gone, [&](Story) { ++called; },
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
