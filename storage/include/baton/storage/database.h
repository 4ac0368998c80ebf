// The storage's direct API (plain C++, no Qt): one Database per connection, used by
// one thread at a time. The CLI uses it directly; the GUI goes through
// StorageController (qt/storage_controller.h), which owns one on its own thread.
#pragma once

#include "baton/storage/error.h"

#include <functional>
#include <memory>
#include <string>

namespace baton::storage {

class Connection;
class StoryStore;
class StateStore;
class BookStore;
class ModelStore;
class RunStore;
class EvalStore;
class TopicStore;
class GenerationStore;
class LoreStore;
class PromptStateStore;
class TokenChoiceStore;
class RecallStore;

// The schema version this build writes, and the newest compatible_version it reads.
int currentSchemaVersion();
// The SQLite library's version, e.g. "3.40.1".
std::string sqliteVersion();

struct OpenOptions {
    bool readOnly = false;    // open an existing database without writing anything
    int busyTimeoutMs = 5000; // how long to wait for another writer
    bool quickCheck = true;   // PRAGMA quick_check on open (read-only, before anything writes)
    bool backupBeforeMigrating = true; // copy the file to PATH.backup-vN before migrating from N
    // A writable open indexes the passages waiting for the recall index (all of them
    // after the migration to version 7; those an older build wrote since), reporting
    // (done, total) after each batch; returning false stops (the rest waits, unsearchable,
    // for the next open). With quickCheck, the index is first checked against its
    // chunks and rebuilt when they disagree.
    std::function<bool(int64_t done, int64_t total)> indexProgress;
};

class Database {
public:
    // Opens or creates the database at `path`. An existing file is first checked
    // read-only: a file that is not an SQLite database, a damaged one, or one whose
    // compatible_version is newer than this build's is refused (Corrupt, TooNew) and
    // left byte-for-byte untouched. Then the schema is migrated to the current version.
    static Result<std::unique_ptr<Database>> open(const std::string& path,
                                                  const OpenOptions& options = {});
    ~Database();
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    const std::string& path() const;
    int schemaVersion() const; // PRAGMA user_version after opening

    StoryStore& stories();
    StateStore& states();
    BookStore& books();
    ModelStore& models();
    RunStore& runs();
    EvalStore& evals();
    TopicStore& topics();
    GenerationStore& generations();
    LoreStore& lore();
    PromptStateStore& promptStates();
    TokenChoiceStore& tokenChoices();
    RecallStore& recall();

    // Runs body in one transaction: committed when it returns success, rolled back
    // when it returns an error. Store calls inside become savepoints of it.
    Result<void> transaction(const std::function<Result<void>()>& body);

    // PRAGMA integrity_check: "ok" or SQLite's list of problems.
    Result<std::string> integrityCheck();

    // Moves the WAL's pages into the main file (done automatically as well).
    Result<void> checkpoint();

    class Impl;

private:
    friend struct DatabaseAccess; // the connection, for storage's own code (connection.h)
    explicit Database(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace baton::storage
