// The RAII layer over SQLite: connection settings (WAL checked), statements with
// bound values and typed columns, transactions that roll back unless committed.
#include "connection.h"
#include "statement.h"
#include "transaction.h"
#include "verify_ok.h"

#include <baton/storage/database.h>

#include <QTemporaryDir>
#include <QtTest>

using namespace baton::storage;

class TestSqlite : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    int m_n = 0;

    std::string freshPath() {
        return (m_tmp.path() + "/db" + QString::number(++m_n)).toStdString();
    }

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_tmp.isValid());
    }

    void pragmasAreSet() {
        Connection c(freshPath(), Connection::Mode::ReadWriteCreate);
        c.configure(1234);
        QCOMPARE(c.queryText("PRAGMA journal_mode"), std::string("wal"));
        QCOMPARE(c.queryInt("PRAGMA foreign_keys"), int64_t(1));
        QCOMPARE(c.queryInt("PRAGMA synchronous"), int64_t(2)); // FULL
        QCOMPARE(c.queryInt("PRAGMA busy_timeout"), int64_t(1234));
    }

    void walRefusedIsAnError() {
        // An in-memory database cannot use WAL: configure() must notice the answer.
        Connection c(":memory:", Connection::Mode::ReadWriteCreate);
        bool threw = false;
        try {
            c.configure(100);
        } catch (const SqliteException& e) {
            threw = true;
            QVERIFY(e.error().detail.find("memory") != std::string::npos);
        }
        QVERIFY(threw);
    }

    void databaseOpensWithTheSettings() {
        auto db = Database::open(freshPath());
        BATON_VERIFY_OK(db);
        auto& c = connectionOf(**db);
        QCOMPARE(c.queryText("PRAGMA journal_mode"), std::string("wal"));
        QCOMPARE(c.queryInt("PRAGMA foreign_keys"), int64_t(1));
        QCOMPARE(c.queryInt("PRAGMA synchronous"), int64_t(2));
        QCOMPARE((*db)->schemaVersion(), currentSchemaVersion());
        // Every table is STRICT (but the recall index's FTS5 table and its own tables,
        // which SQLite makes and which cannot be).
        Statement s = c.prepare("SELECT s.name FROM sqlite_schema s JOIN pragma_table_list t ON "
                                "t.name = s.name AND t.schema = 'main' WHERE s.type = 'table' AND "
                                "s.name NOT LIKE 'sqlite_%' AND t.type = 'table'");
        int tables = 0;
        while (s.step()) {
            ++tables;
            const std::string name = s.columnText(0);
            Statement strict = c.prepare("SELECT strict FROM pragma_table_list WHERE name = ?1");
            strict.bind(1, name);
            QVERIFY(strict.step());
            QVERIFY2(strict.columnInt(0) == 1, name.c_str());
        }
        QVERIFY(tables >= 14);
    }

    void bindAndReadEveryType() {
        Connection c(freshPath(), Connection::Mode::ReadWriteCreate);
        c.configure(100);
        c.exec("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB) STRICT");
        const std::string text("a\0b'; DROP TABLE t; --", 22); // embedded NUL, quote
        const std::vector<uint8_t> blob = {0, 1, 2, 255};
        c.prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4)")
            .bind(1, int64_t(1) << 40)
            .bind(2, 0.25)
            .bind(3, text)
            .bindBlob(4, blob.data(), blob.size())
            .run();
        Statement named = c.prepare("INSERT INTO t VALUES (:i, :r, :s, :b)");
        named.bind(":i", int64_t(-7)).bind(":r", 1e300).bind(":s", std::string());
        named.bindBlob(named.parameterIndex(":b"), nullptr, 0);
        named.run();
        Statement s = c.prepare("SELECT i, r, s, b FROM t ORDER BY rowid");
        QVERIFY(s.step());
        QCOMPARE(s.columnInt(0), int64_t(1) << 40);
        QCOMPARE(s.columnDouble(1), 0.25);
        QCOMPARE(s.columnText(2), text);
        QCOMPARE(s.columnBlob(3), blob);
        QVERIFY(s.step());
        QCOMPARE(s.columnInt(0), int64_t(-7));
        QCOMPARE(s.columnDouble(1), 1e300);
        QCOMPARE(s.columnText(2), std::string());
        QVERIFY(!s.isNull(3)); // an empty blob is not NULL
        QCOMPARE(s.columnBytes(3), int64_t(0));
        QVERIFY(!s.step());
        QCOMPARE(c.queryInt("SELECT count(*) FROM t"), int64_t(2)); // the table survived
        bool threw = false;
        try {
            named.parameterIndex(":nope");
        } catch (const SqliteException& e) {
            threw = e.error().code == StorageErrorCode::Internal;
        }
        QVERIFY(threw);
    }

    void badSqlIsInternal() {
        Connection c(freshPath(), Connection::Mode::ReadWriteCreate);
        try {
            c.prepare("SELEC nonsense");
            QFAIL("prepared bad SQL");
        } catch (const SqliteException& e) {
            QCOMPARE(e.error().code, StorageErrorCode::Internal);
            QVERIFY(e.error().detail.find("SELEC") != std::string::npos);
        }
    }

    void transactionRollsBackUnlessCommitted() {
        Connection c(freshPath(), Connection::Mode::ReadWriteCreate);
        c.configure(100);
        c.exec("CREATE TABLE t (x INTEGER) STRICT");
        {
            Transaction t(c);
            c.exec("INSERT INTO t VALUES (1)");
            QVERIFY(c.inTransaction());
        } // no commit
        QVERIFY(!c.inTransaction());
        QCOMPARE(c.queryInt("SELECT count(*) FROM t"), int64_t(0));
        {
            Transaction t(c);
            c.exec("INSERT INTO t VALUES (1)");
            {
                Transaction inner(c); // a savepoint
                c.exec("INSERT INTO t VALUES (2)");
            } // rolled back alone
            {
                Transaction inner(c);
                c.exec("INSERT INTO t VALUES (3)");
                inner.commit();
            }
            t.commit();
        }
        QCOMPARE(c.queryText("SELECT group_concat(x) FROM t"), std::string("1,3"));
        {
            // An exception inside unwinds to a rollback.
            try {
                Transaction t(c);
                c.exec("INSERT INTO t VALUES (4)");
                c.exec("INSERT INTO nope VALUES (5)");
                t.commit();
            } catch (const SqliteException&) {
            }
        }
        QCOMPARE(c.queryText("SELECT group_concat(x) FROM t"), std::string("1,3"));
    }

    void constraintAndBusyAreMapped() {
        const std::string path = freshPath();
        Connection a(path, Connection::Mode::ReadWriteCreate);
        a.configure(50);
        a.exec("CREATE TABLE t (x INTEGER PRIMARY KEY) STRICT; INSERT INTO t VALUES (1)");
        try {
            a.exec("INSERT INTO t VALUES (1)");
            QFAIL("duplicate key accepted");
        } catch (const SqliteException& e) {
            QCOMPARE(e.error().code, StorageErrorCode::Constraint);
        }
        Connection b(path, Connection::Mode::ReadWrite);
        b.configure(50);
        Transaction holding(a); // BEGIN IMMEDIATE: a holds the write lock
        try {
            Transaction t(b);
            QFAIL("two writers at once");
        } catch (const SqliteException& e) {
            QCOMPARE(e.error().code, StorageErrorCode::Busy);
        }
        // Readers are not blocked by a writer in WAL mode.
        QCOMPARE(b.queryInt("SELECT count(*) FROM t"), int64_t(1));
    }
};

QTEST_GUILESS_MAIN(TestSqlite)
#include "tst_sqlite.moc"
