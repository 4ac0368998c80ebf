#include <baton/storage/state_store.h>

#include "connection.h"
#include "statement.h"
#include "store_util.h"
#include "transaction.h"

namespace baton::storage {

namespace {

constexpr const char* kColumns = "s.id, s.passage_id, s.window_index, s.token_offset, "
                                 "s.model_identity, s.window_size, s.overlap, "
                                 "s.format_version, s.created_at, s.layout";

StoredState readState(const Statement& s) {
    StoredState st;
    st.id = s.columnInt(0);
    st.passageId = s.columnInt(1);
    st.windowIndex = s.columnInt(2);
    st.tokenOffset = s.columnInt(3);
    st.modelIdentity = s.columnText(4);
    st.window = static_cast<int>(s.columnInt(5));
    st.overlap = static_cast<int>(s.columnInt(6));
    st.formatVersion = static_cast<int>(s.columnInt(7));
    st.createdAt = s.columnInt(8);
    st.layout = static_cast<int>(s.columnInt(9));
    return st;
}

// Saves a state (replacing one with the same key) created at `createdAt`; returns its id.
int64_t insertState(Connection& db, const StoredState& state, int64_t createdAt) {
    Transaction t(db);
    db.prepare("DELETE FROM recurrent_states WHERE passage_id = ?1 AND model_identity = ?2 "
               "AND window_size = ?3 AND overlap = ?4 AND format_version = ?5")
        .bind(1, state.passageId)
        .bind(2, state.modelIdentity)
        .bind(3, state.window)
        .bind(4, state.overlap)
        .bind(5, state.formatVersion)
        .run();
    db.prepare("INSERT INTO recurrent_states (passage_id, window_index, token_offset, "
               "model_identity, window_size, overlap, format_version, created_at, layout) "
               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")
        .bind(1, state.passageId)
        .bind(2, state.windowIndex)
        .bind(3, state.tokenOffset)
        .bind(4, state.modelIdentity)
        .bind(5, state.window)
        .bind(6, state.overlap)
        .bind(7, state.formatVersion)
        .bind(8, createdAt)
        .bind(9, static_cast<int64_t>(state.layout))
        .run();
    const int64_t id = db.lastInsertId();
    db.prepare("INSERT INTO state_blobs (state_id, data) VALUES (?1, ?2)")
        .bind(1, id)
        .bindBlob(2, state.blob.data(), state.blob.size())
        .run();
    t.commit();
    return id;
}

} // namespace

Result<int64_t> StateStore::save(const StoredState& state) {
    return guard<int64_t>([&] { return insertState(m_db, state, nowMs()); });
}

Result<std::vector<StoredState>> StateStore::forPassage(int64_t passageId) {
    return guard<std::vector<StoredState>>([&]() -> Result<std::vector<StoredState>> {
        Statement s =
            m_db.prepare(std::string("SELECT ") + kColumns +
                         " FROM recurrent_states s WHERE s.passage_id = ?1 ORDER BY s.id");
        s.bind(1, passageId);
        std::vector<StoredState> out;
        while (s.step())
            out.push_back(readState(s));
        return out;
    });
}

Result<std::optional<StoredState>> StateStore::latestOnPath(int64_t leafId,
                                                            const std::string& modelIdentity,
                                                            int window, int overlap,
                                                            int formatVersion, int layout) {
    return guard<std::optional<StoredState>>([&]() -> Result<std::optional<StoredState>> {
        Statement s =
            m_db.prepare(std::string("WITH RECURSIVE chain(id, depth) AS (SELECT ?1, 0 UNION ALL "
                                     "SELECT p.parent_id, c.depth + 1 FROM passages p JOIN chain c "
                                     "ON p.id = c.id WHERE p.parent_id IS NOT NULL) SELECT ") +
                         kColumns +
                         ", b.data FROM chain c JOIN recurrent_states s ON s.passage_id = c.id "
                         "JOIN state_blobs b ON b.state_id = s.id WHERE s.model_identity = ?2 AND "
                         "s.window_size = ?3 AND s.overlap = ?4 AND s.format_version = ?5 AND "
                         "s.layout = ?6 ORDER BY c.depth LIMIT 1");
        s.bind(1, leafId)
            .bind(2, modelIdentity)
            .bind(3, window)
            .bind(4, overlap)
            .bind(5, formatVersion)
            .bind(6, layout);
        if (!s.step())
            return std::optional<StoredState>{};
        StoredState st = readState(s);
        st.blob = s.columnBlob(10);
        return std::optional<StoredState>(std::move(st));
    });
}

Result<std::vector<StoredState>> StateStore::onPath(int64_t leafId,
                                                    const std::string& modelIdentity, int window,
                                                    int overlap, int formatVersion, int layout) {
    return guard<std::vector<StoredState>>([&]() -> Result<std::vector<StoredState>> {
        Statement s =
            m_db.prepare(std::string("WITH RECURSIVE chain(id, depth) AS (SELECT ?1, 0 UNION ALL "
                                     "SELECT p.parent_id, c.depth + 1 FROM passages p JOIN chain c "
                                     "ON p.id = c.id WHERE p.parent_id IS NOT NULL) SELECT ") +
                         kColumns +
                         " FROM chain c JOIN recurrent_states s ON s.passage_id = c.id WHERE "
                         "s.model_identity = ?2 AND s.window_size = ?3 AND s.overlap = ?4 AND "
                         "s.format_version = ?5 AND s.layout = ?6 ORDER BY c.depth DESC");
        s.bind(1, leafId)
            .bind(2, modelIdentity)
            .bind(3, window)
            .bind(4, overlap)
            .bind(5, formatVersion)
            .bind(6, layout);
        std::vector<StoredState> out;
        while (s.step())
            out.push_back(readState(s));
        return out;
    });
}

Result<int64_t> StateStore::pruneAncestors(const StoredState& kept) {
    return guard<int64_t>([&]() -> Result<int64_t> {
        m_db.prepare("WITH RECURSIVE chain(id) AS (SELECT parent_id FROM passages WHERE id = ?1 "
                     "UNION ALL SELECT p.parent_id FROM passages p JOIN chain c ON p.id = c.id "
                     "WHERE p.parent_id IS NOT NULL), mine(id, win, offset, branch) AS (SELECT "
                     "s.id, s.window_index, s.token_offset, (SELECT count(*) FROM passages k "
                     "WHERE k.parent_id = c.id) >= 2 FROM chain c JOIN recurrent_states s ON "
                     "s.passage_id = c.id WHERE s.model_identity = ?3 AND s.window_size = ?4 AND "
                     "s.overlap = ?5 AND s.format_version = ?6 AND s.layout = ?7) DELETE FROM "
                     "recurrent_states WHERE id IN (SELECT m.id FROM mine m WHERE NOT m.branch "
                     "AND m.win < ?2 AND EXISTS (SELECT 1 FROM mine n WHERE n.win = m.win AND "
                     "n.offset > m.offset))")
            .bind(1, kept.passageId)
            .bind(2, kept.windowIndex)
            .bind(3, kept.modelIdentity)
            .bind(4, static_cast<int64_t>(kept.window))
            .bind(5, static_cast<int64_t>(kept.overlap))
            .bind(6, static_cast<int64_t>(kept.formatVersion))
            .bind(7, static_cast<int64_t>(kept.layout))
            .run();
        return static_cast<int64_t>(m_db.changes());
    });
}

Result<int64_t> StateStore::invalidateFrom(int64_t passageId) {
    return guard<int64_t>([&]() -> Result<int64_t> {
        m_db.prepare(std::string(kSubtree) +
                     "DELETE FROM recurrent_states WHERE passage_id IN (SELECT id FROM sub)")
            .bind(1, passageId)
            .run();
        return static_cast<int64_t>(m_db.changes());
    });
}

Result<std::vector<StoredState>> StateStore::takeFrom(int64_t passageId, bool withBlobs) {
    return guard<std::vector<StoredState>>([&]() -> Result<std::vector<StoredState>> {
        Transaction t(m_db);
        Statement s = m_db.prepare(std::string(kSubtree) + "SELECT " + kColumns +
                                   ", b.data FROM recurrent_states s JOIN state_blobs b ON "
                                   "b.state_id = s.id WHERE s.passage_id IN (SELECT id FROM "
                                   "sub) ORDER BY s.token_offset, s.id");
        s.bind(1, passageId);
        std::vector<StoredState> taken;
        while (s.step()) {
            taken.push_back(readState(s));
            if (withBlobs)
                taken.back().blob = s.columnBlob(10);
        }
        if (auto n = invalidateFrom(passageId); !n)
            return n.error();
        t.commit();
        return taken;
    });
}

Result<int64_t> StateStore::restore(const std::vector<StoredState>& states) {
    return guard<int64_t>([&]() -> Result<int64_t> {
        Transaction t(m_db);
        Statement exists = m_db.prepare("SELECT 1 FROM passages WHERE id = ?1");
        int64_t saved = 0;
        for (const StoredState& state : states) {
            exists.reset();
            exists.bind(1, state.passageId);
            if (!exists.step())
                continue;
            insertState(m_db, state, state.createdAt);
            ++saved;
        }
        t.commit();
        return saved;
    });
}

Result<int64_t> StateStore::countForStory(int64_t storyId) {
    return guard<int64_t>([&]() -> Result<int64_t> {
        Statement s = m_db.prepare("SELECT count(*) FROM recurrent_states s JOIN passages p ON "
                                   "p.id = s.passage_id WHERE p.story_id = ?1");
        s.bind(1, storyId);
        s.step();
        return s.columnInt(0);
    });
}

} // namespace baton::storage
