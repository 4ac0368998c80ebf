#include "schema.h"

#include <cstdio>

#include "connection.h"
#include "statement.h"
#include "transaction.h"

#include <sqlite3.h>

namespace baton::storage {

namespace {

// Version 1: the first schema.
const char* const kSchemaV1 = R"sql(
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value ANY NOT NULL
) STRICT;

CREATE TABLE stories (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    mode INTEGER NOT NULL CHECK (mode IN (1, 2)),
    model_path TEXT NOT NULL DEFAULT '',
    settings_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(settings_json)),
    memory TEXT NOT NULL DEFAULT '',
    authors_note TEXT NOT NULL DEFAULT '',
    current_passage_id INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    FOREIGN KEY (id, current_passage_id) REFERENCES passages (story_id, id)
        DEFERRABLE INITIALLY DEFERRED
) STRICT;
CREATE INDEX stories_by_updated ON stories (updated_at DESC, id DESC);

CREATE TABLE passages (
    id INTEGER PRIMARY KEY,
    story_id INTEGER NOT NULL REFERENCES stories (id) ON DELETE CASCADE,
    parent_id INTEGER,
    author INTEGER NOT NULL CHECK (author IN (1, 2, 3)),
    text TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    edited_at INTEGER NOT NULL DEFAULT 0,
    UNIQUE (story_id, id),
    FOREIGN KEY (story_id, parent_id) REFERENCES passages (story_id, id)
) STRICT;
CREATE INDEX passages_by_parent ON passages (story_id, parent_id);
CREATE INDEX passages_by_parent_id ON passages (parent_id);

CREATE TABLE recurrent_states (
    id INTEGER PRIMARY KEY,
    passage_id INTEGER NOT NULL REFERENCES passages (id) ON DELETE CASCADE,
    window_index INTEGER NOT NULL CHECK (window_index >= 0),
    token_offset INTEGER NOT NULL CHECK (token_offset >= 0),
    model_identity TEXT NOT NULL,
    window_size INTEGER NOT NULL CHECK (window_size > 0),
    overlap INTEGER NOT NULL CHECK (overlap >= 0 AND overlap < window_size),
    format_version INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (passage_id, model_identity, window_size, overlap, format_version)
) STRICT;

CREATE TABLE state_blobs (
    state_id INTEGER PRIMARY KEY REFERENCES recurrent_states (id) ON DELETE CASCADE,
    data BLOB NOT NULL
) STRICT;

CREATE TABLE books (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    source_path TEXT NOT NULL DEFAULT '',
    checksum TEXT NOT NULL,
    text_bytes INTEGER NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE book_texts (
    book_id INTEGER PRIMARY KEY REFERENCES books (id) ON DELETE CASCADE,
    text TEXT NOT NULL
) STRICT;

CREATE TABLE corpora (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE corpus_books (
    corpus_id INTEGER NOT NULL REFERENCES corpora (id) ON DELETE CASCADE,
    book_id INTEGER NOT NULL REFERENCES books (id) ON DELETE RESTRICT,
    position INTEGER NOT NULL,
    PRIMARY KEY (corpus_id, book_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX corpus_books_by_book ON corpus_books (book_id);

CREATE TABLE models (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL DEFAULT '',
    checksum TEXT NOT NULL DEFAULT '',
    config_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(config_json)),
    is_default INTEGER NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1)),
    created_at INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX models_one_default ON models (is_default) WHERE is_default = 1;

CREATE TABLE training_runs (
    id INTEGER PRIMARY KEY,
    model_id INTEGER REFERENCES models (id) ON DELETE SET NULL,
    config_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(config_json)),
    status INTEGER NOT NULL CHECK (status BETWEEN 1 AND 5),
    message TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX training_runs_by_model ON training_runs (model_id);

CREATE TABLE run_checkpoints (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES training_runs (id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX run_checkpoints_by_run ON run_checkpoints (run_id);

CREATE TABLE metric_points (
    run_id INTEGER NOT NULL REFERENCES training_runs (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    step INTEGER NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (run_id, name, step)
) STRICT, WITHOUT ROWID;

CREATE TABLE eval_results (
    id INTEGER PRIMARY KEY,
    model_id INTEGER REFERENCES models (id) ON DELETE SET NULL,
    model_path TEXT NOT NULL,
    text_id TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    window_size INTEGER NOT NULL CHECK (window_size > 0),
    overlap INTEGER NOT NULL CHECK (overlap >= 0),
    scored_tokens INTEGER NOT NULL,
    nll REAL NOT NULL,
    token_ppl REAL NOT NULL,
    word_ppl REAL NOT NULL,
    flops_per_token REAL NOT NULL,
    seconds REAL NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX eval_results_by_model ON eval_results (model_path, text_hash);
CREATE INDEX eval_results_by_model_id ON eval_results (model_id);
)sql";

// Version 2: registered topic models (issue 8). Older builds ignore the table, so
// they may still open a version 2 file (compatible_version stays 1).
constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE topic_models (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    topics INTEGER NOT NULL CHECK (topics > 0),
    vocabulary_size INTEGER NOT NULL CHECK (vocabulary_size > 0),
    summary TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL
) STRICT;
)sql";

// Version 3: generation boundaries (issue 15). Each model generation is a row; the
// passages it wrote carry its id, so a retry after the story was reopened rewrites
// exactly the last generation. Older builds ignore both (compatible_version stays 1).
constexpr const char* kSchemaV3 = R"sql(
CREATE TABLE generations (
    id INTEGER PRIMARY KEY,
    story_id INTEGER NOT NULL REFERENCES stories (id) ON DELETE CASCADE,
    parent_id INTEGER,
    settings_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(settings_json)),
    created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX generations_by_story ON generations (story_id);
ALTER TABLE passages ADD COLUMN generation_id INTEGER
    REFERENCES generations (id) ON DELETE SET NULL;
CREATE INDEX passages_by_generation ON passages (generation_id);
)sql";

// Version 4: world info and window layouts (issue 18). Lore entries per story; each
// generation records the entries it read; each saved state records what every window
// started with (0: nothing, as before; 1: the story's memory). An older build would
// resume from a state made with the memory in every window as if it were not, so it
// may not open the result (compatible_version 4).
constexpr const char* kSchemaV4 = R"sql(
CREATE TABLE lore_entries (
    id INTEGER PRIMARY KEY,
    story_id INTEGER NOT NULL REFERENCES stories (id) ON DELETE CASCADE,
    keys_json TEXT NOT NULL CHECK (json_valid(keys_json)),
    secondary_keys_json TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(secondary_keys_json)),
    content TEXT NOT NULL,
    enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    sort_order INTEGER NOT NULL DEFAULT 100,
    scan_depth INTEGER NOT NULL DEFAULT 256 CHECK (scan_depth > 0),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX lore_entries_by_story ON lore_entries (story_id, sort_order, id);
ALTER TABLE generations ADD COLUMN lore_json TEXT NOT NULL DEFAULT '[]'
    CHECK (json_valid(lore_json));
ALTER TABLE recurrent_states ADD COLUMN layout INTEGER NOT NULL DEFAULT 0
    CHECK (layout IN (0, 1));
)sql";

// Version 5: saved states of raw prompts for the HTTP server's prefix cache (issue 17),
// so a restarted server reads only what follows the longest saved prefix. Older builds
// ignore the table (compatible_version stays 4).
constexpr const char* kSchemaV5 = R"sql(
CREATE TABLE prompt_states (
    id INTEGER PRIMARY KEY,
    owner TEXT NOT NULL,
    prefix_hash TEXT NOT NULL,
    tokens INTEGER NOT NULL CHECK (tokens >= 0),
    data BLOB NOT NULL,
    bytes INTEGER NOT NULL CHECK (bytes >= 0),
    used_at INTEGER NOT NULL,
    UNIQUE (owner, prefix_hash, tokens)
) STRICT;
CREATE INDEX prompt_states_by_use ON prompt_states (used_at, id);
)sql";

// Version 6: the token alternatives of generated passages (each token's likeliest
// alternatives, recorded as it was generated: story/token_choices.h owns the blob's
// format). Older builds ignore the table (compatible_version stays 4).
constexpr const char* kSchemaV6 = R"sql(
CREATE TABLE token_choices (
    passage_id INTEGER PRIMARY KEY REFERENCES passages (id) ON DELETE CASCADE,
    data BLOB NOT NULL CHECK (length(data) <= 1048576)
) STRICT;
)sql";

// Version 7: the recall index (recall_store.h). Passages cut into chunks under an FTS5
// index kept by triggers on the chunks (its `story` column holds the token "s<story
// id>", so a search within one story is FTS5's own intersection, with no join); triggers on
// passages delete a passage's chunks when its text changes and queue every new or changed passage
// in recall_pending, so a write by an older build (which ignores these tables: compatible_version
// stays 4) is never found by stale words and is indexed when this build next opens the file. Every
// passage already there is queued, and indexed when the database is opened (with
// progress).
constexpr const char* kSchemaV7 = R"sql(
CREATE TABLE passage_chunks (
    id INTEGER PRIMARY KEY,
    passage_id INTEGER NOT NULL REFERENCES passages (id) ON DELETE CASCADE,
    start_byte INTEGER NOT NULL CHECK (start_byte >= 0),
    end_byte INTEGER NOT NULL CHECK (end_byte > start_byte),
    text TEXT NOT NULL,
    story TEXT NOT NULL
) STRICT;
CREATE INDEX passage_chunks_by_passage ON passage_chunks (passage_id, start_byte);
CREATE VIRTUAL TABLE recall_index USING fts5 (text, story, content = 'passage_chunks',
    content_rowid = 'id', tokenize = 'porter unicode61 remove_diacritics 2');
CREATE TRIGGER passage_chunks_indexed AFTER INSERT ON passage_chunks BEGIN
    INSERT INTO recall_index (rowid, text, story) VALUES (new.id, new.text, new.story);
END;
CREATE TRIGGER passage_chunks_unindexed AFTER DELETE ON passage_chunks BEGIN
    INSERT INTO recall_index (recall_index, rowid, text, story)
        VALUES ('delete', old.id, old.text, old.story);
END;
CREATE TABLE recall_pending (
    passage_id INTEGER PRIMARY KEY REFERENCES passages (id) ON DELETE CASCADE
) STRICT;
CREATE TRIGGER passages_recall_new AFTER INSERT ON passages BEGIN
    INSERT OR IGNORE INTO recall_pending (passage_id) VALUES (new.id);
END;
CREATE TRIGGER passages_recall_changed AFTER UPDATE OF text ON passages BEGIN
    DELETE FROM passage_chunks WHERE passage_id = new.id;
    INSERT OR IGNORE INTO recall_pending (passage_id) VALUES (new.id);
END;
INSERT INTO recall_pending (passage_id) SELECT id FROM passages;
)sql";

} // namespace

const std::vector<Migration>& migrations() {
    // Append only. Each entry is one version.
    static const std::vector<Migration> list = {
        {1, 1, kSchemaV1}, {2, 1, kSchemaV2}, {3, 1, kSchemaV3}, {4, 4, kSchemaV4},
        {5, 4, kSchemaV5}, {6, 4, kSchemaV6}, {7, 4, kSchemaV7},
    };
    return list;
}

void backupTo(Connection& connection, const std::string& path) {
    Connection target(path, Connection::Mode::ReadWriteCreate);
    sqlite3_backup* b = sqlite3_backup_init(target.handle(), "main", connection.handle(), "main");
    if (!b)
        throwSqlite(target.handle(), sqlite3_errcode(target.handle()), "backup to " + path);
    const int rc = sqlite3_backup_step(b, -1);
    sqlite3_backup_finish(b);
    if (rc != SQLITE_DONE)
        throwSqlite(target.handle(), rc, "backup to " + path);
    // The copy uses a rollback journal with synchronous=FULL (SQLite's default), so
    // it is on disk when the backup finishes, before the original is changed.
}

void migrate(Connection& connection, const std::string& backupPath) {
    migrate(connection, backupPath, migrations());
}

void migrate(Connection& connection, const std::string& backupPath,
             const std::vector<Migration>& list) {
    const int64_t from = connection.queryInt("PRAGMA user_version");
    if (from > 0 && from < list.back().version && !backupPath.empty()) {
        // The copy is made beside the target and kept only if it still holds version
        // `from`: another process that opened the same file may have migrated it
        // meanwhile, and its copy must not replace the real pre-migration backup.
        const std::string tmp = backupPath + ".partial";
        std::remove(tmp.c_str());
        backupTo(connection, tmp);
        int64_t copied = -1;
        {
            Connection check(tmp, Connection::Mode::ReadOnly);
            copied = check.queryInt("PRAGMA user_version");
        }
        if (copied == from) {
            if (std::rename(tmp.c_str(), backupPath.c_str()) != 0)
                throw SqliteException(makeStorageError(StorageErrorCode::Io,
                                                       "cannot keep the backup before migrating",
                                                       tmp + " -> " + backupPath));
        } else {
            std::remove(tmp.c_str());
        }
    }
    for (const Migration& m : list) {
        // The version is read again under the write lock (BEGIN IMMEDIATE): another
        // process may have migrated the file meanwhile, and a migration must never
        // run twice.
        Transaction t(connection);
        const int64_t now = connection.queryInt("PRAGMA user_version");
        if (m.version <= now) {
            t.commit();
            continue;
        }
        connection.exec(m.sql);
        // PRAGMA takes no bound parameters; the version is a constant of this build.
        connection.exec("PRAGMA user_version = " + std::to_string(m.version));
        connection
            .prepare("INSERT INTO meta (key, value) VALUES ('compatible_version', ?1) "
                     "ON CONFLICT (key) DO UPDATE SET value = excluded.value")
            .bind(1, static_cast<int64_t>(m.compatibleVersion))
            .run();
        connection
            .prepare("INSERT INTO meta (key, value) VALUES ('written_by_version', ?1) "
                     "ON CONFLICT (key) DO UPDATE SET value = excluded.value")
            .bind(1, static_cast<int64_t>(m.version))
            .run();
        // Fail the migration (rolled back) if it left a broken foreign key.
        Statement fk = connection.prepare("PRAGMA foreign_key_check");
        if (fk.step())
            throw SqliteException(
                makeStorageError(StorageErrorCode::Internal, "a schema migration failed",
                                 "foreign_key_check after migration " + std::to_string(m.version) +
                                     " reports table " + fk.columnText(0)));
        t.commit();
    }
}

namespace {
std::string quoteIdentifier(const std::string& name) {
    std::string out = "\"";
    for (char c : name) {
        if (c == '"')
            out += '"';
        out += c;
    }
    return out + "\"";
}
} // namespace

std::string dumpDatabase(Connection& connection) {
    std::string out = "-- Baton database dump (storage/src/schema.cpp dumpDatabase)\n"
                      "PRAGMA foreign_keys=OFF;\nBEGIN;\n";
    out += "PRAGMA user_version = " + connection.queryText("PRAGMA user_version") + ";\n";
    // Tables in creation order with their rows; an FTS5 table's own tables (type
    // 'shadow') are made by its CREATE VIRTUAL TABLE and its rows rebuilt from its
    // content table at the end; triggers come after the rows, so loading the rows does
    // not fire them.
    std::vector<std::string> tables, triggers, indexes;
    {
        Statement s = connection.prepare(
            "SELECT s.type, s.name, s.sql, coalesce(t.type, '') FROM sqlite_schema s LEFT "
            "JOIN pragma_table_list t ON t.name = s.name AND t.schema = 'main' WHERE s.sql "
            "IS NOT NULL AND s.name NOT LIKE 'sqlite_%' ORDER BY s.rowid");
        while (s.step()) {
            const std::string type = s.columnText(0), kind = s.columnText(3);
            if (kind == "shadow")
                continue;
            if (type == "trigger") {
                triggers.push_back(s.columnText(2) + ";\n");
                continue;
            }
            out += s.columnText(2) + ";\n";
            if (kind == "virtual")
                indexes.push_back(s.columnText(1));
            else if (type == "table")
                tables.push_back(s.columnText(1));
        }
    }
    for (const auto& table : tables) {
        std::vector<std::string> columns;
        {
            Statement info = connection.prepare("SELECT name FROM pragma_table_info(?1)");
            info.bind(1, table);
            while (info.step())
                columns.push_back(info.columnText(0));
        }
        std::string select = "SELECT 'INSERT INTO " + quoteIdentifier(table) + " VALUES(' || ";
        for (size_t i = 0; i < columns.size(); ++i)
            select += (i ? " || ',' || " : "") + std::string("quote(") +
                      quoteIdentifier(columns[i]) + ")";
        select += " || ');' FROM " + quoteIdentifier(table) + " ORDER BY 1";
        Statement rows = connection.prepare(select);
        while (rows.step())
            out += rows.columnText(0) + "\n";
    }
    for (const auto& trigger : triggers)
        out += trigger;
    for (const auto& index : indexes)
        out += "INSERT INTO " + quoteIdentifier(index) + " (" + quoteIdentifier(index) +
               ") VALUES ('rebuild');\n";
    out += "COMMIT;\n";
    return out;
}

} // namespace baton::storage
