// Injected I/O faults, the way SQLite tests itself: a VFS (fault_vfs.h) fails the Nth
// write (disk full, I/O error, torn write), sync or read, for every N that the
// operation performs, through saving a generated chunk with its state, a typed
// passage, an edit, a branch switch, a training checkpoint and a schema migration.
// After each fault: the operation reports a clear error (or succeeded: a fault after
// the commit point), the database reopens and passes integrity_check, it holds either
// everything it held before or that plus the whole operation (never a part), and
// retrying the operation on the same connection works.
#include "connection.h"
#include "fault_vfs.h"
#include "statement.h"
#include "storage_fixture.h"
#include "verify_ok.h"

#include "titled_story.h"

#include <baton/storage/database.h>
#include <baton/storage/generation_store.h>
#include <baton/storage/run_store.h>
#include <baton/storage/state_store.h>
#include <baton/storage/story_store.h>

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <functional>

using namespace baton::storage;
using baton::test::Fault;
using baton::test::FaultVfs;

namespace {

QString readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

// Every row of every table, timestamps (columns named *_at) left out: what a fault
// may not change unless the whole operation went in.
std::string contents(Connection& c) {
    std::string out;
    auto tables = c.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT "
                            "LIKE 'sqlite_%' ORDER BY name");
    while (tables.step()) {
        const std::string table = tables.columnText(0);
        std::string row;
        auto columns = c.prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid");
        columns.bind(1, table);
        while (columns.step()) {
            const std::string name = columns.columnText(0);
            if (name.size() > 3 && name.compare(name.size() - 3, 3, "_at") == 0)
                continue;
            row += (row.empty() ? "" : " || '|' || ") + std::string("quote(\"") + name + "\")";
        }
        out += table + ":\n" +
               c.queryText("SELECT coalesce(group_concat(r, char(10)), '') FROM (SELECT " + row +
                           " AS r FROM \"" + table + "\" ORDER BY 1)") +
               "\n";
    }
    return out;
}

std::string contentsOf(const std::string& path) {
    Connection c(path, Connection::Mode::ReadOnly);
    return contents(c);
}

struct Ids {
    int64_t story = 0, p2 = 0, p3 = 0, p4 = 0, branch = 0, run = 0;
};

using Operation = std::function<Result<void>(Database&, const Ids&)>;

// The operations a writer performs, each as the app and baton-cli perform it.
Result<void> saveChunk(Database& db, const Ids& ids) {
    return db.transaction([&]() -> Result<void> {
        auto g = db.generations().begin(ids.story, ids.p4, R"({"temperature":0.8})", "[]");
        if (!g)
            return g.error();
        auto passage = db.stories().addPassage(ids.story, ids.p4, std::string(3000, 'c'),
                                               PassageAuthor::Model, true, *g);
        if (!passage)
            return passage.error();
        StoredState s;
        s.passageId = *passage;
        s.windowIndex = 3;
        s.tokenOffset = 400;
        s.modelIdentity = "0123456789abcdef";
        s.window = 128;
        s.blob = baton::test::sampleBlob(9);
        s.blob.resize(6000, 5);
        auto saved = db.states().save(s);
        if (!saved)
            return saved.error();
        auto pruned = db.states().pruneAncestors(s);
        if (!pruned)
            return pruned.error();
        return {};
    });
}
Result<void> typePassage(Database& db, const Ids& ids) {
    auto r = db.stories().append(ids.story, "She wrote a line of her own.", PassageAuthor::User);
    if (!r)
        return r.error();
    return {};
}
Result<void> editPassage(Database& db, const Ids& ids) {
    auto r = db.stories().editPassage(ids.p3, std::string(2000, 'e'));
    if (!r)
        return r.error();
    return {};
}
Result<void> switchBranch(Database& db, const Ids& ids) {
    return db.stories().setCurrent(ids.story, ids.branch);
}
Result<void> trainingCheckpoint(Database& db, const Ids& ids) {
    return db.transaction([&]() -> Result<void> {
        if (auto r = db.runs().addCheckpoint(ids.run, "/runs/a/checkpoints/step-000000100"); !r)
            return r;
        std::vector<MetricPoint> points;
        for (int i = 0; i < 200; ++i)
            points.push_back({ids.run, 100 + i, "train_loss", 4.0 - i * 0.001});
        return db.runs().addMetrics(points);
    });
}

} // namespace

class TestStorageFaults : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_pristine;
    Ids m_ids;
    int m_n = 0;

    std::string fresh() {
        return (m_tmp.path() + "/f" + QString::number(++m_n) + ".db").toStdString();
    }
    std::string copyOfPristine() {
        const std::string path = fresh();
        if (!QFile::copy(m_pristine, QString::fromStdString(path)))
            return {};
        return path;
    }

    // Runs `op` with the Nth operation of `fault` failing, for every N the operation
    // performs; returns how many faults fired (-1: a property did not hold), and counts
    // the runs in which the operation reported the fault in `failures`.
    int sweep(const Operation& op, Fault fault, int& failures) {
        failures = 0;
        FaultVfs vfs;
        // The dry run: how many operations of this kind, and the contents after.
        const std::string dry = copyOfPristine();
        const std::string before = contentsOf(dry);
        int64_t total = 0;
        {
            auto db = Database::open(dry);
            if (!db)
                return -1;
            vfs.arm(fault, INT64_MAX);
            auto r = op(**db, m_ids);
            total = vfs.count();
            vfs.disarm();
            if (!r)
                return -1;
        }
        const std::string after = contentsOf(dry);
        if (after == before)
            return -1;
        int fired = 0;
        for (int64_t n = 1; n <= total; ++n) {
            const std::string path = copyOfPristine();
            bool failed = false;
            {
                auto db = Database::open(path);
                if (!db)
                    return -1;
                vfs.arm(fault, n);
                auto r = op(**db, m_ids);
                vfs.disarm();
                fired += vfs.fired() ? 1 : 0;
                if (!r) {
                    failed = true;
                    ++failures;
                    const auto& e = r.error();
                    const QString what = QString::fromStdString(e.message);
                    // A clear error: the disk is full or an I/O error, said in words.
                    if (e.code != StorageErrorCode::DiskFull && e.code != StorageErrorCode::Io) {
                        qWarning() << "fault" << int(fault) << "n" << n << "code"
                                   << storageErrorCodeName(e.code) << what;
                        return -1;
                    }
                    if (what.isEmpty())
                        return -1;
                    // Nothing of it went in: another connection reads what was there.
                    if (contentsOf(path) != before) {
                        qWarning() << "fault" << int(fault) << "n" << n
                                   << "left part of a failed operation";
                        return -1;
                    }
                    // The same connection recovers: the retry saves everything.
                    auto retry = op(**db, m_ids);
                    if (!retry) {
                        qWarning() << "retry after fault" << int(fault) << "n" << n
                                   << "failed:" << QString::fromStdString(retry.error().message);
                        return -1;
                    }
                }
            }
            // Reopened without faults: intact, and all of the operation or (before the
            // retry) none of it. The retry ran on every failure, so: after.
            auto check = Database::open(path);
            if (!check) {
                qWarning() << "reopen after fault" << int(fault) << "n" << n
                           << QString::fromStdString(check.error().message);
                return -1;
            }
            if (*(*check)->integrityCheck() != "ok")
                return -1;
            check->reset();
            const std::string now = contentsOf(path);
            if (now != after) {
                qWarning() << "fault" << int(fault) << "n" << n << "failed" << failed
                           << "left contents that are neither before nor after the operation";
                return -1;
            }
        }
        return fired;
    }

    void sweepAll(const Operation& op) {
        for (Fault fault : {Fault::DiskFull, Fault::WriteError, Fault::ShortWrite, Fault::SyncError,
                            Fault::ReadError}) {
            int failures = 0;
            const int fired = sweep(op, fault, failures);
            QVERIFY2(fired >= 0, qPrintable(QString("fault kind %1").arg(int(fault))));
            qInfo("fault kind %d: %d injected, %d reported by the operation", int(fault), fired,
                  failures);
            if (fault != Fault::ReadError) { // reads may all be served from the page cache
                QVERIFY2(fired > 0,
                         qPrintable(QString("no fault of kind %1 fired").arg(int(fault))));
                QVERIFY2(failures > 0,
                         qPrintable(
                             QString("no fault of kind %1 failed the operation").arg(int(fault))));
            }
        }
    }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        m_pristine = m_tmp.path() + "/pristine.db";
        auto db = Database::open(m_pristine.toStdString());
        BATON_VERIFY_OK(db);
        Database& d = **db;
        m_ids.story = *d.stories().create(titled("Faults"));
        (void)*d.stories().append(m_ids.story, "The first passage. ", PassageAuthor::User);
        m_ids.p2 = *d.stories().append(m_ids.story, "The second. ", PassageAuthor::Model);
        m_ids.p3 = *d.stories().append(m_ids.story, "The third. ", PassageAuthor::Model);
        m_ids.p4 = *d.stories().append(m_ids.story, "The fourth. ", PassageAuthor::User);
        m_ids.branch = *d.stories().addPassage(m_ids.story, m_ids.p2, "Another way. ",
                                               PassageAuthor::Model, false, 0);
        BATON_VERIFY_OK(d.stories().setCurrent(m_ids.story, m_ids.p4));
        TrainingRun run;
        run.configJson = R"({"window":128})";
        m_ids.run = *d.runs().create(run);
        db->reset(); // closed: the WAL is checkpointed into the file
        QVERIFY(QFile::exists(m_pristine));
    }

    // A disk that stays full: every attempt fails with DiskFull and changes nothing,
    // until there is room again.
    void diskStaysFull() {
        FaultVfs vfs;
        const std::string path = copyOfPristine();
        const std::string before = contentsOf(path);
        auto db = Database::open(path);
        BATON_VERIFY_OK(db);
        vfs.arm(Fault::DiskFull, 2, true);
        for (int attempt = 0; attempt < 3; ++attempt) {
            auto r = saveChunk(**db, m_ids);
            QVERIFY(!r);
            QCOMPARE(r.error().code, StorageErrorCode::DiskFull);
            QCOMPARE(contentsOf(path), before);
        }
        vfs.disarm();
        BATON_VERIFY_OK(saveChunk(**db, m_ids));
        QVERIFY(contentsOf(path) != before);
        QCOMPARE(*(*db)->integrityCheck(), std::string("ok"));
    }

    void savingAChunk() { sweepAll(saveChunk); }
    void typingAPassage() { sweepAll(typePassage); }
    void editingAPassage() { sweepAll(editPassage); }
    void switchingBranches() { sweepAll(switchBranch); }
    void trainingCheckpoint() { sweepAll(::trainingCheckpoint); }

    // A migration from the first schema: a fault leaves the file as it was (it still
    // opens, migrates and holds its data afterwards) or migrated.
    void migration() {
        FaultVfs vfs;
        const QString dump = QStringLiteral(BATON_SOURCE_DIR "/tests/storage/data/schema_v1.sql");
        const QString sql = readAll(dump);
        QVERIFY(!sql.isEmpty());
        auto load = [&]() {
            const std::string path = fresh();
            Connection c(path, Connection::Mode::ReadWriteCreate);
            c.exec(sql.toStdString());
            return path;
        };
        for (Fault fault : {Fault::DiskFull, Fault::ShortWrite, Fault::SyncError}) {
            const std::string dry = load();
            vfs.arm(fault, INT64_MAX);
            BATON_VERIFY_OK(Database::open(dry));
            const int64_t total = vfs.count();
            vfs.disarm();
            QVERIFY(total > 0);
            int failures = 0;
            for (int64_t n = 1; n <= total; ++n) {
                const std::string path = load();
                vfs.arm(fault, n);
                {
                    auto db = Database::open(path);
                    vfs.disarm();
                    if (!db) {
                        ++failures;
                        QVERIFY(db.error().code == StorageErrorCode::DiskFull ||
                                db.error().code == StorageErrorCode::Io);
                        QVERIFY(!db.error().message.empty());
                    }
                } // closed before it is opened again
                auto again = Database::open(path);
                BATON_VERIFY_OK(again);
                QCOMPARE(*(*again)->integrityCheck(), std::string("ok"));
                const std::string problem = baton::test::checkSampleData(**again, 1);
                QVERIFY2(problem.empty(), problem.c_str());
            }
            qInfo("migration, fault kind %d: %lld injected, %d failed the migration", int(fault),
                  static_cast<long long>(total), failures);
            QVERIFY2(failures > 0, "no fault made a migration fail");
        }
    }
};

QTEST_GUILESS_MAIN(TestStorageFaults)
#include "tst_storage_faults.moc"
