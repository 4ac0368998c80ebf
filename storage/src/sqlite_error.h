// Inside the storage only: SQLite failures become SqliteException carrying a
// StorageError; every public store method catches it at the boundary (guard()).
#pragma once

#include <baton/storage/error.h>

#include <stdexcept>
#include <string>

struct sqlite3;

namespace baton::storage {

class SqliteException : public std::runtime_error {
public:
    explicit SqliteException(StorageError error, int sqliteCode = 0)
        : std::runtime_error(error.message)
        , m_error(std::move(error))
        , m_sqliteCode(sqliteCode) {}
    const StorageError& error() const { return m_error; }
    // SQLite's result code (extended when the connection reports them); 0 when the
    // failure was found by storage's own checks.
    int sqliteCode() const { return m_sqliteCode; }

private:
    StorageError m_error;
    int m_sqliteCode = 0;
};

// Maps an SQLite result code (primary or extended) to a stable code.
StorageErrorCode codeForSqlite(int rc);
// A StorageError for rc with the connection's message, the path and `what` in the detail.
StorageError sqliteError(sqlite3* db, int rc, const std::string& what);
[[noreturn]] void throwSqlite(sqlite3* db, int rc, const std::string& what);

// Runs body (which returns T or Result<T>), turning SqliteException and
// std::bad_alloc into a Result error.
template <typename T, typename F>
Result<T> guard(F&& body) {
    try {
        return body();
    } catch (const SqliteException& e) {
        return e.error();
    } catch (const std::bad_alloc&) {
        return makeStorageError(StorageErrorCode::Internal, "out of memory");
    }
}

} // namespace baton::storage
