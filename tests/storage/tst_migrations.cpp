// Migrations: every saved dump of an older schema (tests/storage/data/schema_vN.sql)
// opens and reaches the current version with its data intact; the newest dump's
// schema is exactly what this build creates (migrations are append-only); the
// machinery backs up, runs each migration in its own transaction and stops at a
// failing one; compatible_version decides what is refused as too new.
//
//   tst_migrations --write-dump DIR   writes DIR/schema_vN.sql for the current N
#include "connection.h"
#include "schema.h"
#include "statement.h"
#include "storage_fixture.h"
#include "verify_ok.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <iostream>

using namespace baton::storage;

namespace {

QString dataDir() {
    return QStringLiteral(BATON_SOURCE_DIR "/tests/storage/data");
}

QString dumpPath(int version) {
    return dataDir() + QString("/schema_v%1.sql").arg(version);
}

std::string readAll(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll().toStdString();
}

// The dump without its rows: the schema and the version.
std::string schemaLines(const std::string& dump) {
    std::string out, line;
    for (size_t pos = 0; pos < dump.size();) {
        size_t eol = dump.find('\n', pos);
        if (eol == std::string::npos)
            eol = dump.size();
        line = dump.substr(pos, eol - pos);
        if (line.rfind("INSERT INTO", 0) != 0)
            out += line + "\n";
        pos = eol + 1;
    }
    return out;
}

int writeDump(const QString& dir) {
    QTemporaryDir tmp; // the database the dump is made from never lands in DIR
    const QString path = tmp.filePath("dump-source.db");
    auto db = Database::open(path.toStdString());
    if (!db) {
        std::cerr << describe(db.error()) << "\n";
        return 1;
    }
    if (const std::string e = baton::test::fillSampleData(**db); !e.empty()) {
        std::cerr << "sample data: " << e << "\n";
        return 1;
    }
    const std::string dump = dumpDatabase(connectionOf(**db));
    QFile out(dir + QString("/schema_v%1.sql").arg(currentSchemaVersion()));
    if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        out.write(dump.data(), static_cast<qint64>(dump.size())) != qint64(dump.size()))
        return 1;
    std::cout << out.fileName().toStdString() << "\n";
    return 0;
}

} // namespace

class TestMigrations : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    int m_n = 0;

    QString fresh() { return m_tmp.path() + "/m" + QString::number(++m_n) + ".db"; }

    // A database file loaded from a dump with a plain connection (no migration).
    QString load(const QString& dump) {
        const QString path = fresh();
        Connection c(path.toStdString(), Connection::Mode::ReadWriteCreate);
        c.exec(readAll(dump));
        return path;
    }

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_tmp.isValid());
    }

    void firstSchemaIsVersionOne() {
        QCOMPARE(migrations().front().version, 1);
        for (size_t i = 0; i < migrations().size(); ++i) {
            QCOMPARE(migrations()[i].version, int(i + 1)); // one per version, in order
            QVERIFY(migrations()[i].compatibleVersion <= migrations()[i].version);
        }
    }

    void dumpsCoverEveryVersion() {
        // Each version has a saved dump: the test of migration N + 1 starts from it.
        for (int v = 1; v <= currentSchemaVersion(); ++v)
            QVERIFY2(QFile::exists(dumpPath(v)),
                     qPrintable("missing " + dumpPath(v) +
                                " (write it with tst_migrations --write-dump DIR)"));
    }

    void currentSchemaMatchesItsDump() {
        // Migrations are append-only: a fresh database must have exactly the schema
        // saved for this version.
        auto db = Database::open(fresh().toStdString());
        QVERIFY(db.ok());
        QCOMPARE(baton::test::fillSampleData(**db), std::string());
        const std::string now = schemaLines(dumpDatabase(connectionOf(**db)));
        const std::string saved = schemaLines(readAll(dumpPath(currentSchemaVersion())));
        QVERIFY(!saved.empty());
        QCOMPARE(now, saved);
    }

    void migratesFromEveryDump_data() {
        QTest::addColumn<QString>("dump");
        QTest::addColumn<int>("version");
        const auto files = QDir(dataDir()).entryList({"schema_v*.sql"}, QDir::Files);
        QVERIFY(!files.isEmpty());
        for (const auto& f : files) {
            const int v = f.mid(8, f.size() - 12).toInt();
            QTest::newRow(qPrintable(f)) << dataDir() + "/" + f << v;
        }
    }
    void migratesFromEveryDump() {
        QFETCH(QString, dump);
        QFETCH(int, version);
        const QString path = load(dump);
        {
            Connection raw(path.toStdString(), Connection::Mode::ReadOnly);
            QCOMPARE(raw.queryInt("PRAGMA user_version"), int64_t(version));
        }
        auto db = Database::open(path.toStdString());
        BATON_VERIFY_OK(db);
        QCOMPARE((*db)->schemaVersion(), currentSchemaVersion());
        QCOMPARE(
            connectionOf(**db).queryText("SELECT value FROM meta WHERE key = 'compatible_version'"),
            std::to_string(migrations().back().compatibleVersion));
        QCOMPARE(baton::test::checkSampleData(**db, version), std::string());
        QCOMPARE(*(*db)->integrityCheck(), std::string("ok"));
        QCOMPARE(connectionOf(**db).queryText("PRAGMA foreign_key_check"), std::string());
        const QString backup = path + QString(".backup-v%1").arg(version);
        if (version < currentSchemaVersion()) {
            QVERIFY2(QFile::exists(backup), qPrintable(backup));
            Connection copy(backup.toStdString(), Connection::Mode::ReadOnly);
            QCOMPARE(copy.queryInt("PRAGMA user_version"), int64_t(version));
        } else {
            QVERIFY(!QFile::exists(backup)); // nothing to migrate, nothing copied
        }
    }

    void machineryBacksUpAndStopsAtAFailure() {
        const QString path = load(dumpPath(1));
        const std::string backup = (path + ".bak").toStdString();
        std::vector<Migration> list = migrations();
        const int base = currentSchemaVersion();
        list.push_back({base + 1, 1, "CREATE TABLE extra (x INTEGER) STRICT;"});
        list.push_back({base + 2, base + 2,
                        "CREATE TABLE half (x INTEGER) STRICT; INSERT INTO nope VALUES (1);"});
        {
            Connection c(path.toStdString(), Connection::Mode::ReadWrite);
            c.configure(1000);
            QVERIFY_THROWS_EXCEPTION(SqliteException, migrate(c, backup, list));
            // The good migration is committed; the bad one left nothing behind.
            QCOMPARE(c.queryInt("PRAGMA user_version"), int64_t(base + 1));
            QCOMPARE(c.queryInt("SELECT count(*) FROM sqlite_schema WHERE name = 'extra'"),
                     int64_t(1));
            QCOMPARE(c.queryInt("SELECT count(*) FROM sqlite_schema WHERE name = 'half'"),
                     int64_t(0));
            QCOMPARE(c.queryInt("SELECT value FROM meta WHERE key = 'compatible_version'"),
                     int64_t(1));
        }
        {
            Connection copy(backup, Connection::Mode::ReadOnly);
            QCOMPARE(copy.queryInt("PRAGMA user_version"), int64_t(1));
            QCOMPARE(copy.queryInt("SELECT count(*) FROM stories"), int64_t(1));
        }
        // Newer (base + 1) but declared compatible with this build: it opens, as is.
        {
            auto db = Database::open(path.toStdString());
            BATON_VERIFY_OK(db);
            QCOMPARE((*db)->schemaVersion(), base + 1);
            QCOMPARE(baton::test::checkSampleData(**db, 1), std::string()); // a v1 dump
        }
        // Fixed, the last migration runs; its compatible_version makes the file too
        // new for this build, which refuses it and leaves it unchanged.
        list.back().sql = "CREATE TABLE half (x INTEGER) STRICT;";
        {
            Connection c(path.toStdString(), Connection::Mode::ReadWrite);
            c.configure(1000);
            migrate(c, backup, list);
            QCOMPARE(c.queryInt("PRAGMA user_version"), int64_t(base + 2));
            c.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        }
        const QByteArray before = [&] {
            QFile f(path);
            f.open(QIODevice::ReadOnly);
            return f.readAll();
        }();
        auto refused = Database::open(path.toStdString());
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code, StorageErrorCode::TooNew);
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), before);
    }
};

int main(int argc, char** argv) {
    if (argc == 3 && std::strcmp(argv[1], "--write-dump") == 0)
        return writeDump(QString::fromLocal8Bit(argv[2]));
    QCoreApplication app(argc, argv);
    TestMigrations t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_migrations.moc"
