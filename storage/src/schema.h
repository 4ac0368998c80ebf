// The schema as an append-only list of migrations. Migration N takes a database
// from user_version N - 1 to N; it runs in its own transaction, after a backup copy
// of the file, and records the compatible_version readers need. Never edit a
// migration that has shipped: add a new one (and a dump test, see
// tests/storage/data/README.md).
#pragma once

#include <string>
#include <vector>

namespace baton::storage {

class Connection;

struct Migration {
    int version;           // user_version after this migration
    int compatibleVersion; // the oldest schema version whose code can still use the result
    const char* sql;
};

const std::vector<Migration>& migrations();

// Runs every migration above the database's user_version. When backupPath is not
// empty and the database holds data (user_version > 0), the file is first copied
// there with SQLite's backup API. Throws SqliteException.
void migrate(Connection& connection, const std::string& backupPath);
// The same with another list (tests of the migration machinery).
void migrate(Connection& connection, const std::string& backupPath,
             const std::vector<Migration>& list);

// Copies the whole database to `path` (a consistent snapshot, WAL included).
void backupTo(Connection& connection, const std::string& path);

// A plain-SQL dump: user_version, the schema in creation order and every row as
// INSERT with quote()d values. Loading it into an empty file with foreign keys off
// rebuilds the database. Used by the migration tests' saved dumps.
std::string dumpDatabase(Connection& connection);

} // namespace baton::storage
