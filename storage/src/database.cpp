#include <baton/storage/book_store.h>
#include <baton/storage/database.h>
#include <baton/storage/eval_store.h>
#include <baton/storage/generation_store.h>
#include <baton/storage/lore_store.h>
#include <baton/storage/model_store.h>
#include <baton/storage/prompt_state_store.h>
#include <baton/storage/recall_store.h>
#include <baton/storage/run_store.h>
#include <baton/storage/state_store.h>
#include <baton/storage/story_store.h>
#include <baton/storage/token_choice_store.h>
#include <baton/storage/topic_store.h>

#include "connection.h"
#include "schema.h"

#include "statement.h"
#include "transaction.h"
#include <sqlite3.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace baton::storage {

std::string sqliteVersion() {
    return sqlite3_libversion();
}

int currentSchemaVersion() {
    return migrations().back().version;
}

class Database::Impl {
public:
    Impl(std::unique_ptr<Connection> c)
        : connection(std::move(c))
        , stories(*connection)
        , states(*connection)
        , books(*connection)
        , models(*connection)
        , runs(*connection)
        , evals(*connection)
        , topics(*connection)
        , generations(*connection)
        , lore(*connection)
        , promptStates(*connection)
        , tokenChoices(*connection)
        , recall(*connection) {}

    std::unique_ptr<Connection> connection;
    StoryStore stories;
    StateStore states;
    BookStore books;
    ModelStore models;
    RunStore runs;
    EvalStore evals;
    TopicStore topics;
    GenerationStore generations;
    LoreStore lore;
    PromptStateStore promptStates;
    TokenChoiceStore tokenChoices;
    RecallStore recall;
    int version = 0;
};

namespace {

std::string folderOf(const std::string& path) {
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

// The message names the short reason; the detail keeps SQLite's words.
StorageError corrupt(const std::string& path, const std::string& why,
                     const std::string& detail = {}) {
    return makeStorageError(StorageErrorCode::Corrupt,
                            path + " is damaged or is not a Baton database (" + why +
                                "); it was left unchanged",
                            (detail.empty() ? why : detail) + " [" + path + "]");
}

// A rollback journal beside the file with something in it (SQLite decides whether it is
// hot; this only says whether a writable connection should look first).
bool hasHotJournal(const std::string& path) {
    struct stat st {};
    return ::stat((path + "-journal").c_str(), &st) == 0 && st.st_size > 0;
}

// Checks an existing database with a read-only connection: nothing is written, not
// even a journal. Returns the user_version, or an error.
//
// Only SQLite opens the database file (and its -wal and -shm): closing any other
// descriptor of the file would drop every POSIX lock this process holds on it, the
// locks of its open connections included, and another process could then delete the
// write-ahead log they still write to ("How To Corrupt An SQLite Database File",
// section 2.2). A file that is not a database is SQLite's own SQLITE_NOTADB here.
Result<int64_t> probe(const std::string& path, bool quickCheck) {
    try {
        Connection c(path, Connection::Mode::ReadOnly);
        if (quickCheck) {
            const std::string check = c.queryText("PRAGMA quick_check");
            if (check != "ok")
                return corrupt(path, "the integrity check failed",
                               "quick_check: " + check.substr(0, 300));
        }
        const int64_t version = c.queryInt("PRAGMA user_version");
        const int64_t objects = c.queryInt("SELECT count(*) FROM sqlite_schema");
        if (version == 0)
            return objects == 0 ? Result<int64_t>(int64_t{0})
                                : corrupt(path, "an SQLite database, but not Baton's");
        if (c.queryInt("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND "
                       "name = 'meta'") != 1)
            return corrupt(path, "an SQLite database with a version but no meta table");
        Statement s = c.prepare("SELECT value FROM meta WHERE key = 'compatible_version'");
        if (!s.step())
            return corrupt(path, "the meta table has no compatible_version");
        const int64_t compatible = s.columnInt(0);
        if (compatible > currentSchemaVersion())
            return makeStorageError(
                StorageErrorCode::TooNew,
                path + " was written by a newer version of Baton; update Baton to open it "
                       "(the file was left unchanged)",
                "schema " + std::to_string(version) + ", compatible_version " +
                    std::to_string(compatible) + ", this build reads up to " +
                    std::to_string(currentSchemaVersion()));
        return version;
    } catch (const SqliteException& e) {
        if ((e.sqliteCode() & 0xFF) == SQLITE_NOTADB)
            return corrupt(path, "the file is not an SQLite database", e.error().detail);
        if (e.error().code == StorageErrorCode::Corrupt)
            return corrupt(path, "SQLite reports a malformed file", e.error().detail);
        return e.error();
    }
}

} // namespace

Result<std::unique_ptr<Database>> Database::open(const std::string& path,
                                                 const OpenOptions& options) {
    if (path.empty())
        return makeStorageError(StorageErrorCode::InvalidArgument, "no database path given");
    struct stat st {};
    const bool exists = ::stat(path.c_str(), &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return makeStorageError(StorageErrorCode::CannotOpen, path + " is a folder, not a file");
    const bool empty = !exists || st.st_size == 0; // an empty file is an empty database
    if (!exists && options.readOnly)
        return makeStorageError(StorageErrorCode::NotFound, "no database at " + path);
    if (!options.readOnly) {
        const std::string folder = folderOf(path);
        struct stat fst {};
        if (::stat(folder.c_str(), &fst) != 0)
            return makeStorageError(StorageErrorCode::CannotOpen,
                                    "the folder " + folder + " does not exist",
                                    std::strerror(errno));
        if (::access(folder.c_str(), W_OK) != 0)
            return makeStorageError(StorageErrorCode::ReadOnly,
                                    "the folder " + folder +
                                        " is read-only: the database needs to write its "
                                        "journal beside the file",
                                    std::strerror(errno));
        if (exists && ::access(path.c_str(), W_OK) != 0)
            return makeStorageError(StorageErrorCode::ReadOnly,
                                    "the database file " + path + " is read-only",
                                    std::strerror(errno));
    }
    int64_t version = 0;
    // A writer killed while the file was still in rollback-journal mode (while it was
    // being created, before WAL) leaves a hot journal. Only a connection that may write
    // can roll it back (SQLite does on its first read), and the read-only probe would
    // fail on it with "attempt to write a readonly database".
    if (exists && !empty && !options.readOnly && hasHotJournal(path)) {
        try {
            Connection recover(path, Connection::Mode::ReadWrite);
            recover.queryInt("PRAGMA user_version");
        } catch (const SqliteException& e) {
            return e.error();
        }
    }
    if (exists && !empty) {
        auto v = probe(path, options.quickCheck);
        if (!v)
            return v.error();
        version = *v;
    }
    // A version above ours with a compatible_version we read is used as is: migrate()
    // runs only the migrations above the file's version, i.e. none.
    try {
        const auto mode = options.readOnly ? Connection::Mode::ReadOnly
                                           : (exists ? Connection::Mode::ReadWrite
                                                     : Connection::Mode::ReadWriteCreate);
        auto connection = std::make_unique<Connection>(path, mode);
        if (!options.readOnly && connection->readOnly())
            return makeStorageError(StorageErrorCode::ReadOnly,
                                    "the database file " + path + " is read-only",
                                    "sqlite3_db_readonly after opening read-write");
        if (options.readOnly) {
            connection->exec("PRAGMA busy_timeout = " + std::to_string(options.busyTimeoutMs));
            connection->exec("PRAGMA foreign_keys=ON");
            if (version < currentSchemaVersion())
                return makeStorageError(StorageErrorCode::InvalidArgument,
                                        path + " needs an upgrade; open it writable once",
                                        "schema " + std::to_string(version));
        } else {
            connection->configure(options.busyTimeoutMs);
            migrate(*connection, options.backupBeforeMigrating
                                     ? path + ".backup-v" + std::to_string(version)
                                     : std::string());
        }
        auto impl = std::make_unique<Impl>(std::move(connection));
        if (!options.readOnly) {
            if (options.quickCheck) {
                auto sound = impl->recall.check();
                if (!sound)
                    return sound.error();
                if (!*sound)
                    if (auto r = impl->recall.rebuild(); !r)
                        return r.error();
            }
            if (auto r = impl->recall.indexPending(options.indexProgress); !r)
                return r.error();
        }
        impl->version = static_cast<int>(impl->connection->queryInt("PRAGMA user_version"));
        return std::unique_ptr<Database>(new Database(std::move(impl)));
    } catch (const SqliteException& e) {
        if (e.error().code == StorageErrorCode::Corrupt)
            return corrupt(path, "SQLite reports a malformed file", e.error().detail);
        return e.error();
    }
}

Database::Database(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl)) {}

Database::~Database() = default;

const std::string& Database::path() const {
    return m_impl->connection->path();
}
int Database::schemaVersion() const {
    return m_impl->version;
}
StoryStore& Database::stories() {
    return m_impl->stories;
}
StateStore& Database::states() {
    return m_impl->states;
}
BookStore& Database::books() {
    return m_impl->books;
}
ModelStore& Database::models() {
    return m_impl->models;
}
RunStore& Database::runs() {
    return m_impl->runs;
}
EvalStore& Database::evals() {
    return m_impl->evals;
}
TopicStore& Database::topics() {
    return m_impl->topics;
}
GenerationStore& Database::generations() {
    return m_impl->generations;
}
LoreStore& Database::lore() {
    return m_impl->lore;
}
PromptStateStore& Database::promptStates() {
    return m_impl->promptStates;
}
TokenChoiceStore& Database::tokenChoices() {
    return m_impl->tokenChoices;
}
RecallStore& Database::recall() {
    return m_impl->recall;
}
Connection& DatabaseAccess::connection(Database& db) {
    return *db.m_impl->connection;
}

Result<void> Database::transaction(const std::function<Result<void>()>& body) {
    return guard<void>([&]() -> Result<void> {
        Transaction t(*m_impl->connection);
        Result<void> r = body();
        if (!r)
            return r; // rolled back by t
        t.commit();
        return {};
    });
}

Result<std::string> Database::integrityCheck() {
    return guard<std::string>([&]() -> Result<std::string> {
        Statement s = m_impl->connection->prepare("PRAGMA integrity_check");
        std::string out;
        while (s.step())
            out += (out.empty() ? "" : "\n") + s.columnText(0);
        return out;
    });
}

Result<void> Database::checkpoint() {
    return guard<void>([&]() -> Result<void> {
        m_impl->connection->exec("PRAGMA wal_checkpoint(TRUNCATE)");
        return {};
    });
}

} // namespace baton::storage
