-- Baton database dump (storage/src/schema.cpp dumpDatabase)
PRAGMA foreign_keys=OFF;
BEGIN;
PRAGMA user_version = 7;
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
    edited_at INTEGER NOT NULL DEFAULT 0, generation_id INTEGER
    REFERENCES generations (id) ON DELETE SET NULL,
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
    created_at INTEGER NOT NULL, layout INTEGER NOT NULL DEFAULT 0
    CHECK (layout IN (0, 1)),
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
CREATE TABLE topic_models (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    topics INTEGER NOT NULL CHECK (topics > 0),
    vocabulary_size INTEGER NOT NULL CHECK (vocabulary_size > 0),
    summary TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL
) STRICT;
CREATE TABLE generations (
    id INTEGER PRIMARY KEY,
    story_id INTEGER NOT NULL REFERENCES stories (id) ON DELETE CASCADE,
    parent_id INTEGER,
    settings_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(settings_json)),
    created_at INTEGER NOT NULL
, lore_json TEXT NOT NULL DEFAULT '[]'
    CHECK (json_valid(lore_json))) STRICT;
CREATE INDEX generations_by_story ON generations (story_id);
CREATE INDEX passages_by_generation ON passages (generation_id);
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
CREATE TABLE token_choices (
    passage_id INTEGER PRIMARY KEY REFERENCES passages (id) ON DELETE CASCADE,
    data BLOB NOT NULL CHECK (length(data) <= 1048576)
) STRICT;
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
CREATE TABLE recall_pending (
    passage_id INTEGER PRIMARY KEY REFERENCES passages (id) ON DELETE CASCADE
) STRICT;
INSERT INTO "meta" VALUES('compatible_version',4);
INSERT INTO "meta" VALUES('written_by_version',7);
INSERT INTO "stories" VALUES(1,'Sample story',2,'/models/tiny','{"temperature":0.8,"window":128}','Memory text','Author''s note',4,1795942769327,1795942769332);
INSERT INTO "passages" VALUES(1,1,NULL,1,'It began. ',1795942769328,0,NULL);
INSERT INTO "passages" VALUES(2,1,1,2,'It went on — ünïcode. ',1795942769329,0,1);
INSERT INTO "passages" VALUES(3,1,1,2,'Another way. ',1795942769331,0,NULL);
INSERT INTO "passages" VALUES(4,1,2,3,'The end.',1795942769331,0,NULL);
INSERT INTO "recurrent_states" VALUES(1,2,1,140,'0123456789abcdef',128,16,1,1795942769332,0);
INSERT INTO "recurrent_states" VALUES(2,4,1,140,'0123456789abcdef',128,16,1,1795942769332,1);
INSERT INTO "state_blobs" VALUES(1,X'0726456483A2C1E0FF1E3D5C7B9AB9D8F71635547392B1D0EF0E2D4C6B8AA9C8E70625446382A1C0DFFE1D3C5B7A99B8D7F61534537291B0CFEE0D2C4B6A89A8C7E60524436281A0BFDEFD1C3B5A7998B7D6F51433527190AFCEED0C2B4A6988A7C6E504234261809FBEDDFC1B3A597897B6D5F4133251708FAECDEC0B2A496887A6C5E4032241607F9EBDDCFB1A39587796B5D4F31231506F8EADCCEB0A29486786A5C4E30221405F7E9DBCDBFA1938577695B4D3F211304F6E8DACCBEA0928476685A4C3E201203F5E7D9CBBDAF91837567594B3D2F1102F4E6D8CABCAE90827466584A3C2E1001F3E5D7C9BBAD9F81736557493B2D1F00F2E4D6C8BAAC9E80726456483A2C1E0FF1E3D5C7B9AB9D8F71635547392B1D0EF0E2D4C6B8AA9C8E70625446382A1C0DFFE1D3C');
INSERT INTO "state_blobs" VALUES(2,X'0E2D4C6B8AA9C8E70625446382A1C0DFFE1D3C5B7A99B8D7F61534537291B0CFEE0D2C4B6A89A8C7E60524436281A0BFDEFD1C3B5A7998B7D6F51433527190AFCEED0C2B4A6988A7C6E504234261809FBEDDFC1B3A597897B6D5F4133251708FAECDEC0B2A496887A6C5E4032241607F9EBDDCFB1A39587796B5D4F31231506F8EADCCEB0A29486786A5C4E30221405F7E9DBCDBFA1938577695B4D3F211304F6E8DACCBEA0928476685A4C3E201203F5E7D9CBBDAF91837567594B3D2F1102F4E6D8CABCAE90827466584A3C2E1001F3E5D7C9BBAD9F81736557493B2D1F00F2E4D6C8BAAC9E80726456483A2C1E0FF1E3D5C7B9AB9D8F71635547392B1D0EF0E2D4C6B8AA9C8E70625446382A1C0DFFE1D3C5B7A99B8D7F61534537291B0CFEE0D2C4B6A89A8C7E6052443');
INSERT INTO "books" VALUES(1,'Emma','/books/emma.txt','sum',15,1795942769333);
INSERT INTO "book_texts" VALUES(1,'Emma Woodhouse.');
INSERT INTO "corpora" VALUES(1,'Austen',1795942769333);
INSERT INTO "corpus_books" VALUES(1,1,0);
INSERT INTO "models" VALUES(1,'/models/tiny','Tiny','msum','{"n_layer":2}',1,1795942769333);
INSERT INTO "training_runs" VALUES(1,1,'{"steps":10}',3,'',1795942769333,1795942769333);
INSERT INTO "run_checkpoints" VALUES(1,1,'/ckpt/a',1795942769333);
INSERT INTO "metric_points" VALUES(1,'train_loss',1,4.5);
INSERT INTO "metric_points" VALUES(1,'train_loss',2,4.25);
INSERT INTO "eval_results" VALUES(1,1,'/models/tiny','emma.txt','feedface',128,16,1000,3000.5,20.25,50.5,1500000.0,0.75,1795942769334);
INSERT INTO "topic_models" VALUES(1,'/topics/austen.json','Austen, 20 topics',20,4106,'3 files',1795942769334);
INSERT INTO "generations" VALUES(1,1,1,'{"seed":3}',1795942769328,'[{"id":1}]');
INSERT INTO "lore_entries" VALUES(1,1,'["Elinor","Miss Dashwood"]','["Norland"]','Elinor is the elder sister.',1,7,64,1795942769328,1795942769328);
INSERT INTO "prompt_states" VALUES(1,'0123456789abcdef/128/16','00ff',128,X'1534537291B0CFEE0D2C4B6A89A8C7E60524436281A0BFDEFD1C3B5A7998B7D6F51433527190AFCEED0C2B4A6988A7C6E504234261809FBEDDFC1B3A597897B6D5F4133251708FAECDEC0B2A496887A6C5E4032241607F9EBDDCFB1A39587796B5D4F31231506F8EADCCEB0A29486786A5C4E30221405F7E9DBCDBFA1938577695B4D3F211304F6E8DACCBEA0928476685A4C3E201203F5E7D9CBBDAF91837567594B3D2F1102F4E6D8CABCAE90827466584A3C2E1001F3E5D7C9BBAD9F81736557493B2D1F00F2E4D6C8BAAC9E80726456483A2C1E0FF1E3D5C7B9AB9D8F71635547392B1D0EF0E2D4C6B8AA9C8E70625446382A1C0DFFE1D3C5B7A99B8D7F61534537291B0CFEE0D2C4B6A89A8C7E60524436281A0BFDEFD1C3B5A7998B7D6F51433527190AFCEED0C2B4A',300,1795942769332);
INSERT INTO "passage_chunks" VALUES(1,1,0,10,'It began. ','s1');
INSERT INTO "passage_chunks" VALUES(2,2,0,26,'It went on — ünïcode. ','s1');
INSERT INTO "passage_chunks" VALUES(3,3,0,13,'Another way. ','s1');
INSERT INTO "passage_chunks" VALUES(4,4,0,8,'The end.','s1');
CREATE TRIGGER passage_chunks_indexed AFTER INSERT ON passage_chunks BEGIN
    INSERT INTO recall_index (rowid, text, story) VALUES (new.id, new.text, new.story);
END;
CREATE TRIGGER passage_chunks_unindexed AFTER DELETE ON passage_chunks BEGIN
    INSERT INTO recall_index (recall_index, rowid, text, story)
        VALUES ('delete', old.id, old.text, old.story);
END;
CREATE TRIGGER passages_recall_new AFTER INSERT ON passages BEGIN
    INSERT OR IGNORE INTO recall_pending (passage_id) VALUES (new.id);
END;
CREATE TRIGGER passages_recall_changed AFTER UPDATE OF text ON passages BEGIN
    DELETE FROM passage_chunks WHERE passage_id = new.id;
    INSERT OR IGNORE INTO recall_pending (passage_id) VALUES (new.id);
END;
INSERT INTO "recall_index" ("recall_index") VALUES ('rebuild');
COMMIT;
