#include <baton/storage/lore_store.h>

#include "connection.h"
#include "statement.h"
#include "store_util.h"

#include <baton/common/json.h>

namespace baton::storage {

namespace {

constexpr const char* kColumns = "id, story_id, keys_json, secondary_keys_json, content, "
                                 "enabled, sort_order, scan_depth, created_at, updated_at";

std::vector<std::string> readKeys(const std::string& text) {
    std::vector<std::string> keys;
    auto v = baton::json::parse(text, nullptr);
    if (v && v->is_array())
        for (const auto& k : *v)
            if (k.is_string())
                keys.push_back(k.get<std::string>());
    return keys;
}

std::string keysJson(const std::vector<std::string>& keys) {
    return nlohmann::json(keys).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Binds an entry's editable fields as ?1 to ?6 (keys, secondary keys, content, enabled,
// order, scan depth).
Statement& bindFields(Statement& s, const LoreEntry& e) {
    return s.bind(1, keysJson(e.keys))
        .bind(2, keysJson(e.secondaryKeys))
        .bind(3, e.content)
        .bind(4, static_cast<int64_t>(e.enabled ? 1 : 0))
        .bind(5, static_cast<int64_t>(e.order))
        .bind(6, static_cast<int64_t>(e.scanDepth));
}

LoreEntry readEntry(const Statement& s) {
    LoreEntry e;
    e.id = s.columnInt(0);
    e.storyId = s.columnInt(1);
    e.keys = readKeys(s.columnText(2));
    e.secondaryKeys = readKeys(s.columnText(3));
    e.content = s.columnText(4);
    e.enabled = s.columnInt(5) != 0;
    e.order = static_cast<int>(s.columnInt(6));
    e.scanDepth = static_cast<int>(s.columnInt(7));
    e.createdAt = s.columnInt(8);
    e.updatedAt = s.columnInt(9);
    return e;
}

std::optional<StorageError> invalid(const LoreEntry& e) {
    bool anyKey = false;
    for (const auto& k : e.keys)
        anyKey = anyKey || !k.empty();
    if (!anyKey)
        return makeStorageError(StorageErrorCode::InvalidArgument,
                                "a world-info entry needs at least one key");
    if (e.scanDepth < 1)
        return makeStorageError(StorageErrorCode::InvalidArgument,
                                "a world-info entry's scan depth must be at least one token");
    return std::nullopt;
}

} // namespace

Result<int64_t> LoreStore::add(const LoreEntry& entry) {
    if (auto e = invalid(entry))
        return *e;
    return guard<int64_t>([&]() -> Result<int64_t> {
        const int64_t now = nowMs();
        Statement s =
            m_db.prepare("INSERT INTO lore_entries (keys_json, secondary_keys_json, content, "
                         "enabled, sort_order, scan_depth, story_id, created_at, updated_at) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)");
        bindFields(s, entry).bind(7, entry.storyId).bind(8, now).run();
        return m_db.lastInsertId();
    });
}

Result<void> LoreStore::update(const LoreEntry& entry) {
    if (auto e = invalid(entry))
        return *e;
    return guard<void>([&]() -> Result<void> {
        Statement s =
            m_db.prepare("UPDATE lore_entries SET keys_json = ?1, secondary_keys_json = ?2, "
                         "content = ?3, enabled = ?4, sort_order = ?5, scan_depth = ?6, "
                         "updated_at = ?7 WHERE id = ?8");
        bindFields(s, entry).bind(7, nowMs()).bind(8, entry.id).run();
        if (m_db.changes() == 0)
            throwNotFound("world-info entry", entry.id);
        return {};
    });
}

Result<void> LoreStore::remove(int64_t id) {
    return guard<void>([&]() -> Result<void> {
        m_db.prepare("DELETE FROM lore_entries WHERE id = ?1").bind(1, id).run();
        if (m_db.changes() == 0)
            throwNotFound("world-info entry", id);
        return {};
    });
}

Result<LoreEntry> LoreStore::get(int64_t id) {
    return guard<LoreEntry>([&]() -> Result<LoreEntry> {
        Statement s =
            m_db.prepare(std::string("SELECT ") + kColumns + " FROM lore_entries WHERE id = ?1");
        s.bind(1, id);
        if (!s.step())
            throwNotFound("world-info entry", id);
        return readEntry(s);
    });
}

Result<std::vector<LoreEntry>> LoreStore::list(int64_t storyId) {
    return guard<std::vector<LoreEntry>>([&]() -> Result<std::vector<LoreEntry>> {
        Statement s = m_db.prepare(std::string("SELECT ") + kColumns +
                                   " FROM lore_entries WHERE story_id = ?1 ORDER BY sort_order, "
                                   "id");
        s.bind(1, storyId);
        std::vector<LoreEntry> out;
        while (s.step())
            out.push_back(readEntry(s));
        return out;
    });
}

} // namespace baton::storage
