#include "connection.h"

#include "statement.h"

#include <sqlite3.h>

namespace baton::storage {

Connection::Connection(const std::string& path, Mode mode)
    : m_path(path) {
    int flags = SQLITE_OPEN_NOMUTEX; // one thread at a time per connection
    switch (mode) {
    case Mode::ReadOnly:
        flags |= SQLITE_OPEN_READONLY;
        break;
    case Mode::ReadWrite:
        flags |= SQLITE_OPEN_READWRITE;
        break;
    case Mode::ReadWriteCreate:
        flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
        break;
    }
    const int rc = sqlite3_open_v2(path.c_str(), &m_db, flags, nullptr);
    if (rc != SQLITE_OK) {
        StorageError e = sqliteError(m_db, rc, "open " + path);
        sqlite3_close_v2(m_db);
        m_db = nullptr;
        throw SqliteException(std::move(e), rc);
    }
    sqlite3_extended_result_codes(m_db, 1);
}

Connection::~Connection() {
    // Statements are RAII-finalised before their connection; close_v2 also copes
    // with any left over.
    sqlite3_close_v2(m_db);
}

void Connection::configure(int busyTimeoutMs) {
    sqlite3_busy_timeout(m_db, busyTimeoutMs);
    const std::string mode = queryText("PRAGMA journal_mode=WAL");
    if (mode != "wal")
        throw SqliteException(
            makeStorageError(StorageErrorCode::Io, "the database cannot use write-ahead logging",
                             "PRAGMA journal_mode=WAL answered '" + mode + "' [" + m_path + "]"));
    exec("PRAGMA foreign_keys=ON");
    if (queryInt("PRAGMA foreign_keys") != 1)
        throw SqliteException(makeStorageError(StorageErrorCode::Internal,
                                               "foreign keys cannot be enforced",
                                               "PRAGMA foreign_keys reads back 0"));
    exec("PRAGMA synchronous=FULL");
}

void Connection::exec(const std::string& sql) {
    char* message = nullptr;
    const int rc = sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &message);
    if (message)
        sqlite3_free(message);
    if (rc != SQLITE_OK)
        throwSqlite(m_db, rc, sql.substr(0, 200));
}

std::string Connection::queryText(const std::string& sql) {
    Statement s(m_db, sql);
    return s.step() ? s.columnText(0) : std::string();
}

int64_t Connection::queryInt(const std::string& sql) {
    Statement s(m_db, sql);
    return s.step() ? s.columnInt(0) : 0;
}

Statement Connection::prepare(const std::string& sql) {
    return Statement(m_db, sql);
}

int64_t Connection::lastInsertId() const {
    return sqlite3_last_insert_rowid(m_db);
}

int Connection::changes() const {
    return sqlite3_changes(m_db);
}

bool Connection::inTransaction() const {
    return sqlite3_get_autocommit(m_db) == 0;
}

bool Connection::readOnly() const {
    return sqlite3_db_readonly(m_db, "main") == 1;
}

} // namespace baton::storage
