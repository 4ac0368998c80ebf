// Nothing lost: a writer streaming chunks into a story is killed with SIGKILL at
// random moments, at least 50 times. Afterwards PRAGMA integrity_check is ok, every
// chunk the writer reported as committed is there, the chunks form one unbroken
// sequence, none is half-written, and every chunk has its state.
#include "connection.h"
#include "crash_chunk.h"
#include "statement.h"
#include "verify_ok.h"

#include <baton/storage/database.h>
#include <baton/storage/recall_store.h>
#include <baton/storage/state_store.h>
#include <baton/storage/story_store.h>

#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>

#include <set>

#include <signal.h>

using namespace baton::storage;

class TestStorageCrash : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;

    std::set<int64_t> reported(const QString& side) {
        std::set<int64_t> out;
        QFile f(side);
        if (!f.open(QIODevice::ReadOnly))
            return out;
        const auto lines = f.readAll().split('\n');
        for (const auto& l : lines) {
            bool ok = false;
            const qint64 v = l.toLongLong(&ok);
            if (ok)
                out.insert(v);
        }
        return out;
    }

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_tmp.isValid());
        QVERIFY2(QFile::exists(BATON_CRASH_WRITER_PATH), BATON_CRASH_WRITER_PATH);
    }

    void chunkFormatDetectsDamage() {
        const std::string c = baton::test::makeChunk(42);
        QCOMPARE(baton::test::parseChunk(c).value_or(-1), int64_t(42));
        QVERIFY(!baton::test::parseChunk(c.substr(0, c.size() - 3)));
        std::string flipped = c;
        flipped[20] ^= 1;
        QVERIFY(!baton::test::parseChunk(flipped));
    }

    void killNineManyTimes() {
        const QString db = m_tmp.path() + "/crash.db";
        const QString side = m_tmp.path() + "/committed.txt";
        auto* rng = QRandomGenerator::global();
        const int kKills = 100;
        int kills = 0, finishedEarly = 0;
        QElapsedTimer clock;
        clock.start();
        for (int round = 0; round < kKills; ++round) {
            QProcess writer;
            writer.setProcessChannelMode(QProcess::ForwardedErrorChannel);
            writer.start(BATON_CRASH_WRITER_PATH, {db, side, "1000000"});
            QVERIFY2(writer.waitForStarted(10000), "the writer did not start");
            // A random moment: during open and migration for the first rounds,
            // mid-stream later.
            const int delayMs = round < 5 ? int(rng->bounded(0, 15)) : int(rng->bounded(5, 150));
            QTest::qSleep(delayMs);
            if (writer.state() == QProcess::Running) {
                ::kill(static_cast<pid_t>(writer.processId()), SIGKILL);
                ++kills;
            } else {
                ++finishedEarly;
            }
            QVERIFY(writer.waitForFinished(10000));
            if (writer.exitStatus() == QProcess::NormalExit)
                QVERIFY2(writer.exitCode() == 0,
                         qPrintable(QString("the writer failed in round %1").arg(round)));
        }
        QVERIFY2(kills >= 50, qPrintable(QString("only %1 kills").arg(kills)));
        qInfo("%d kills in %.1f s", kills, clock.elapsed() / 1000.0);

        const std::set<int64_t> committed = reported(side);
        QVERIFY2(committed.size() > 50, "the writer committed almost nothing between kills");

        // Check with a plain read-only connection first (nothing repaired by opening),
        // the recall index too: every passage indexed in its own transaction, none
        // waiting, FTS5's integrity-check clean.
        {
            Connection c(db.toStdString(), Connection::Mode::ReadOnly);
            QCOMPARE(c.queryText("PRAGMA integrity_check"), std::string("ok"));
            QCOMPARE(c.queryInt("SELECT count(*) FROM recall_pending"), int64_t(0));
            QCOMPARE(c.queryInt("SELECT count(*) FROM passages p WHERE NOT EXISTS (SELECT 1 FROM "
                                "passage_chunks c WHERE c.passage_id = p.id)"),
                     int64_t(0));
            QCOMPARE(c.queryInt("SELECT count(*) FROM passage_chunks c JOIN passages p ON p.id = "
                                "c.passage_id WHERE substr(CAST(p.text AS BLOB), c.start_byte + 1, "
                                "c.end_byte - c.start_byte) != CAST(c.text AS BLOB)"),
                     int64_t(0));
        }
        auto opened = Database::open(db.toStdString());
        BATON_VERIFY_OK(opened);
        auto& d = **opened;
        QCOMPARE(*d.integrityCheck(), std::string("ok"));
        QCOMPARE(*d.recall().check(), true);
        QCOMPARE(connectionOf(d).queryText("PRAGMA foreign_key_check"), std::string());
        auto stories = d.stories().list();
        QCOMPARE(stories->size(), size_t(1)); // the story was created exactly once
        const int64_t story = stories->front().id;
        auto path = d.stories().currentPath(story);
        QVERIFY(path.ok());
        QCOMPARE(int64_t(path->size()), *d.stories().passageCount(story)); // no stray branch
        int64_t expected = 0;
        for (const auto& p : *path) {
            const auto index = baton::test::parseChunk(p.text);
            QVERIFY2(index.has_value(), qPrintable("a damaged chunk: " +
                                                   QString::fromStdString(p.text.substr(0, 40))));
            QCOMPARE(*index, expected);
            auto states = d.states().forPassage(p.id);
            QCOMPARE(states->size(), size_t(1));
            ++expected;
        }
        for (int64_t i : committed)
            QVERIFY2(i < expected, qPrintable(QString("chunk %1 was reported committed but is "
                                                      "missing (%2 chunks stored)")
                                                  .arg(i)
                                                  .arg(expected)));
        // Every blob is whole.
        Statement blobs = connectionOf(d).prepare(
            "SELECT p.text, b.data FROM passages p JOIN recurrent_states s ON s.passage_id = p.id "
            "JOIN state_blobs b ON b.state_id = s.id");
        int checked = 0;
        while (blobs.step()) {
            const auto index = baton::test::parseChunk(blobs.columnText(0));
            QVERIFY(index.has_value());
            QVERIFY(blobs.columnBlob(1) == baton::test::chunkStateBlob(*index));
            ++checked;
        }
        QCOMPARE(int64_t(checked), expected);
        qInfo("%lld chunks stored, %zu reported committed, %d rounds ended before the kill",
              static_cast<long long>(expected), committed.size(), finishedEarly);

        // And the writer carries on after all that.
        QProcess writer;
        writer.start(BATON_CRASH_WRITER_PATH, {db, side, "5"});
        QVERIFY(writer.waitForFinished(30000));
        QCOMPARE(writer.exitCode(), 0);
        QCOMPARE(*d.stories().passageCount(story), expected + 5);
    }
};

QTEST_GUILESS_MAIN(TestStorageCrash)
#include "tst_storage_crash.moc"
