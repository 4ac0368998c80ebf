// Failures that must be ordinary outcomes: a corrupt or non-database file is
// refused as Corrupt and never changed; a newer schema is refused as TooNew and
// never changed; a read-only file or folder gives ReadOnly; a full disk gives
// DiskFull, the transaction is rolled back, the caller keeps its data and can retry.
#include "connection.h"
#include "statement.h"
#include "verify_ok.h"

#include "titled_story.h"

#include <baton/storage/database.h>
#include <baton/storage/state_store.h>
#include <baton/storage/story_store.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/wait.h>
#include <unistd.h>

using namespace baton::storage;

namespace {

QByteArray bytesOf(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool writeBytes(const QString& path, const QByteArray& data) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(data) == data.size();
}

// A closed database with a story of `passages` passages (WAL checkpointed away).
QString makeDatabase(const QString& path, int passages) {
    auto db = Database::open(path.toStdString());
    if (!db)
        return {};
    const int64_t story = *(*db)->stories().create(titled("Kept"));
    (void)(*db)->transaction([&]() -> Result<void> {
        for (int i = 0; i < passages; ++i)
            (void)(*db)->stories().append(story, std::string(200, char('a' + i % 26)),
                                          PassageAuthor::Model);
        return {};
    });
    return path;
}

// Makes a path unwritable even for root (chattr +i), or reports why not.
bool makeImmutable(const QString& path, bool on) {
    if (::geteuid() != 0)
        return true; // chmod is enough
    return QProcess::execute("chattr", {on ? "+i" : "-i", path}) == 0;
}

} // namespace

class TestStorageFailures : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    int m_n = 0;
    QStringList m_immutable;

    QString fresh() { return m_tmp.path() + "/f" + QString::number(++m_n) + ".db"; }

    void expectRefusedAndUnchanged(const QString& path, StorageErrorCode code, const char* word) {
        const QByteArray before = bytesOf(path);
        auto db = Database::open(path.toStdString());
        QVERIFY(!db.ok());
        QCOMPARE(db.error().code, code);
        QVERIFY2(db.error().message.find(word) != std::string::npos, db.error().message.c_str());
        QVERIFY2(db.error().message.find("unchanged") != std::string::npos,
                 db.error().message.c_str());
        QCOMPARE(bytesOf(path), before);
        // Asking again changes nothing either.
        QCOMPARE(Database::open(path.toStdString()).error().code, code);
        QCOMPARE(bytesOf(path), before);
    }

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_tmp.isValid());
    }

    void cleanup() {
        for (const auto& p : m_immutable) {
            makeImmutable(p, false);
            QFile::setPermissions(p, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        }
        m_immutable.clear();
    }

    void randomBytesAreCorrupt() {
        const QString path = fresh();
        QByteArray junk(8192, 0);
        for (auto& c : junk)
            c = static_cast<char>(QRandomGenerator::global()->generate());
        QVERIFY(writeBytes(path, junk));
        expectRefusedAndUnchanged(path, StorageErrorCode::Corrupt, "not a Baton database");
    }

    void textFileIsCorrupt() {
        const QString path = fresh();
        QVERIFY(writeBytes(path, "Chapter 1\n\nIt was a dark and stormy night.\n"));
        expectRefusedAndUnchanged(path, StorageErrorCode::Corrupt, "not a Baton database");
        QVERIFY(!QFile::exists(path + "-wal"));
    }

    void truncatedDatabaseIsCorrupt() {
        const QString path = makeDatabase(fresh(), 400);
        QVERIFY(!path.isEmpty());
        QByteArray bytes = bytesOf(path);
        QVERIFY(bytes.size() > 40 * 4096);
        QVERIFY(writeBytes(path, bytes.left(bytes.size() / 2)));
        expectRefusedAndUnchanged(path, StorageErrorCode::Corrupt, "is damaged or is not a Baton");
    }

    void damagedPagesAreCorrupt() {
        const QString path = makeDatabase(fresh(), 400);
        QByteArray bytes = bytesOf(path);
        for (int i = 4096 * 3; i < 4096 * 8; ++i)
            bytes[i] = static_cast<char>(QRandomGenerator::global()->generate());
        QVERIFY(writeBytes(path, bytes));
        expectRefusedAndUnchanged(path, StorageErrorCode::Corrupt, "is damaged or is not a Baton");
    }

    // A writer killed in the middle of a transaction while the file was in rollback-
    // journal mode (as during its creation) leaves a hot journal: the next open rolls it
    // back and opens, with everything committed before and nothing of the transaction.
    void hotJournalIsRolledBackOnOpen() {
        const QString path = makeDatabase(fresh(), 20);
        QVERIFY(!path.isEmpty());
        int64_t before = 0;
        {
            Connection c(path.toStdString(), Connection::Mode::ReadOnly);
            before = c.queryInt("SELECT count(*) FROM passages");
        }
        const pid_t child = ::fork();
        if (child == 0) { // dies with the transaction open and its journal written
            Connection c(path.toStdString(), Connection::Mode::ReadWrite);
            c.exec("PRAGMA journal_mode=DELETE; PRAGMA cache_size=1; BEGIN");
            c.exec("DELETE FROM passages");
            ::_exit(0);
        }
        int status = 0;
        QCOMPARE(::waitpid(child, &status, 0), child);
        QVERIFY(QFileInfo(path + "-journal").size() > 0);
        auto db = Database::open(path.toStdString());
        BATON_VERIFY_OK(db);
        Connection c(path.toStdString(), Connection::Mode::ReadOnly);
        QCOMPARE(c.queryText("PRAGMA integrity_check"), std::string("ok"));
        QCOMPARE(c.queryInt("SELECT count(*) FROM passages"), before);
    }

    void otherSqliteDatabaseIsRefused() {
        const QString path = fresh();
        {
            Connection c(path.toStdString(), Connection::Mode::ReadWriteCreate);
            c.exec("CREATE TABLE photos (x INTEGER); INSERT INTO photos VALUES (1)");
        }
        expectRefusedAndUnchanged(path, StorageErrorCode::Corrupt, "not Baton");
    }

    void newerSchemaIsTooNew() {
        const QString path = makeDatabase(fresh(), 3);
        {
            Connection c(path.toStdString(), Connection::Mode::ReadWrite);
            c.prepare("UPDATE meta SET value = ?1 WHERE key = 'compatible_version'")
                .bind(1, int64_t(currentSchemaVersion() + 1))
                .run();
            c.exec("PRAGMA user_version = " + std::to_string(currentSchemaVersion() + 1));
        }
        expectRefusedAndUnchanged(path, StorageErrorCode::TooNew, "newer version of Baton");
    }

    void readOnlyFile() {
        const QString path = makeDatabase(fresh(), 3);
        QVERIFY(!QFile::exists(path + "-wal")); // closed cleanly
        QVERIFY(QFile::setPermissions(path, QFile::ReadOwner | QFile::ReadGroup));
        QVERIFY(makeImmutable(path, true));
        m_immutable << path;
        QFile probe(path);
        QVERIFY2(!probe.open(QIODevice::WriteOnly | QIODevice::Append),
                 "cannot make a file read-only here");
        const QByteArray before = bytesOf(path);
        auto db = Database::open(path.toStdString());
        QVERIFY(!db.ok());
        QCOMPARE(db.error().code, StorageErrorCode::ReadOnly);
        QVERIFY2(db.error().message.find("read-only") != std::string::npos,
                 db.error().message.c_str());
        QCOMPARE(bytesOf(path), before);
        // It can still be read, explicitly read-only.
        OpenOptions ro;
        ro.readOnly = true;
        auto reader = Database::open(path.toStdString(), ro);
        BATON_VERIFY_OK(reader);
        QCOMPARE((*reader)->stories().list()->size(), size_t(1));
    }

    void readOnlyFolder() {
        const QString folder = m_tmp.path() + "/ro" + QString::number(++m_n);
        QVERIFY(QDir().mkpath(folder));
        const QString existing = makeDatabase(folder + "/a.db", 3);
        QVERIFY(QFile::setPermissions(folder, QFile::ReadOwner | QFile::ExeOwner));
        QVERIFY(makeImmutable(folder, true));
        m_immutable << folder;
        QFile probe(folder + "/probe");
        QVERIFY2(!probe.open(QIODevice::WriteOnly), "cannot make a folder read-only here");
        for (const QString& path : {existing, folder + "/new.db"}) {
            auto db = Database::open(path.toStdString());
            QVERIFY(!db.ok());
            QCOMPARE(db.error().code, StorageErrorCode::ReadOnly);
            QVERIFY2(db.error().message.find("folder") != std::string::npos,
                     db.error().message.c_str());
        }
        QVERIFY(!QFile::exists(folder + "/new.db"));
    }

    void missingFolderCannotOpen() {
        auto db = Database::open((m_tmp.path() + "/no/such/folder/x.db").toStdString());
        QVERIFY(!db.ok());
        QCOMPARE(db.error().code, StorageErrorCode::CannotOpen);
    }

    void diskFullKeepsTheCallersDataAndTheDatabase() {
        const QString path = makeDatabase(fresh(), 5);
        auto db = Database::open(path.toStdString());
        BATON_VERIFY_OK(db);
        const int64_t story = (*db)->stories().list()->front().id;
        const std::string before = *(*db)->stories().currentText(story);
        // SQLite answers SQLITE_FULL on a full disk; max_page_count makes it happen here.
        auto& c = connectionOf(**db);
        const int64_t pages = c.queryInt("PRAGMA page_count");
        c.exec("PRAGMA max_page_count = " + std::to_string(pages + 2));
        const std::string chunk(1 << 20, 'z'); // 1 MiB: more than two pages
        StoredState state;
        state.modelIdentity = "m";
        state.window = 8;
        state.blob.assign(1000, 7);
        auto r = (*db)->transaction([&]() -> Result<void> {
            auto passage = (*db)->stories().append(story, chunk, PassageAuthor::Model);
            if (!passage)
                return passage.error();
            state.passageId = *passage;
            auto saved = (*db)->states().save(state);
            if (!saved)
                return saved.error();
            return {};
        });
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, StorageErrorCode::DiskFull);
        QVERIFY2(r.error().message.find("disk is full") != std::string::npos,
                 r.error().message.c_str());
        // The database is as before and still usable; the caller still holds its text.
        QCOMPARE(*(*db)->stories().currentText(story), before);
        QCOMPARE(*(*db)->stories().passageCount(story), int64_t(5));
        QCOMPARE(*(*db)->states().countForStory(story), int64_t(0));
        QVERIFY(!c.inTransaction());
        // Small writes that fit still work; with space again, the same data saves.
        BATON_VERIFY_OK((*db)->stories().append(story, "small", PassageAuthor::User));
        c.exec("PRAGMA max_page_count = 1073741823");
        auto retry = (*db)->stories().append(story, chunk, PassageAuthor::Model);
        BATON_VERIFY_OK(retry);
        QCOMPARE(*(*db)->stories().currentText(story), before + "small" + chunk);
        QCOMPARE(*(*db)->integrityCheck(), std::string("ok"));
    }
};

QTEST_GUILESS_MAIN(TestStorageFailures)
#include "tst_storage_failures.moc"
