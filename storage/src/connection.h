// RAII over sqlite3*: one connection, used by one thread at a time.
#pragma once

#include "sqlite_error.h"

#include <cstdint>
#include <string>

struct sqlite3;

namespace baton::storage {

class Statement;
class Database;

class Connection {
public:
    enum class Mode { ReadOnly, ReadWrite, ReadWriteCreate };

    // Opens `path` (throws SqliteException). Nothing is written by opening.
    Connection(const std::string& path, Mode mode);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    // Per-connection settings: busy timeout, WAL (the answer is checked: "wal"),
    // foreign_keys=ON (read back), synchronous=FULL. Throws on failure.
    void configure(int busyTimeoutMs);

    // Runs one or more statements without results (schema, pragmas, dumps).
    void exec(const std::string& sql);
    // The first column of the first row of a query, as text ("" when no row).
    std::string queryText(const std::string& sql);
    int64_t queryInt(const std::string& sql);

    Statement prepare(const std::string& sql);

    int64_t lastInsertId() const;
    int changes() const;
    bool inTransaction() const; // false in autocommit mode
    bool readOnly() const;      // the main database cannot be written
    const std::string& path() const { return m_path; }
    sqlite3* handle() const { return m_db; }

private:
    sqlite3* m_db = nullptr;
    std::string m_path;
};

// A database's connection, for storage's own code and its tests (not in the public
// API: nothing outside storage runs SQL).
struct DatabaseAccess {
    static Connection& connection(Database& db);
};
inline Connection& connectionOf(Database& db) {
    return DatabaseAccess::connection(db);
}

} // namespace baton::storage
