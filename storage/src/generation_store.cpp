#include <baton/storage/generation_store.h>

#include "connection.h"
#include "statement.h"
#include "store_util.h"

namespace baton::storage {

Result<int64_t> GenerationStore::begin(int64_t storyId, int64_t parentId,
                                       const std::string& settingsJson,
                                       const std::string& loreJson) {
    return guard<int64_t>([&]() -> Result<int64_t> {
        if (parentId != 0) {
            Statement s = m_db.prepare("SELECT story_id FROM passages WHERE id = ?1");
            s.bind(1, parentId);
            if (!s.step() || s.columnInt(0) != storyId)
                return makeStorageError(StorageErrorCode::Constraint,
                                        "the generation's parent belongs to another story",
                                        "passage " + std::to_string(parentId));
        }
        m_db.prepare("INSERT INTO generations (story_id, parent_id, settings_json, created_at, "
                     "lore_json) VALUES (?1, ?2, ?3, ?4, ?5)")
            .bind(1, storyId)
            .bindId(2, parentId)
            .bind(3, settingsJson.empty() ? std::string("{}") : settingsJson)
            .bind(4, nowMs())
            .bind(5, loreJson.empty() ? std::string("[]") : loreJson)
            .run();
        return m_db.lastInsertId();
    });
}

Result<Generation> GenerationStore::get(int64_t id) {
    return guard<Generation>([&]() -> Result<Generation> {
        Statement s = m_db.prepare("SELECT id, story_id, parent_id, settings_json, created_at, "
                                   "lore_json FROM generations WHERE id = ?1");
        s.bind(1, id);
        if (!s.step())
            throwNotFound("generation", id);
        Generation g;
        g.id = s.columnInt(0);
        g.storyId = s.columnInt(1);
        g.parentId = s.isNull(2) ? 0 : s.columnInt(2);
        g.settingsJson = s.columnText(3);
        g.createdAt = s.columnInt(4);
        g.loreJson = s.columnText(5);
        return g;
    });
}

} // namespace baton::storage
