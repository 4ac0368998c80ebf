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
