#include <baton/storage/token_choice_store.h>

#include "connection.h"
#include "statement.h"
#include "store_util.h"

namespace baton::storage {

Result<void> TokenChoiceStore::set(int64_t passageId, const std::vector<uint8_t>& blob) {
    return guard<void>([&]() -> Result<void> {
        if (blob.empty()) {
            m_db.prepare("DELETE FROM token_choices WHERE passage_id = ?1")
                .bind(1, passageId)
                .run();
            return {};
        }
        m_db.prepare("INSERT INTO token_choices (passage_id, data) VALUES (?1, ?2) "
                     "ON CONFLICT (passage_id) DO UPDATE SET data = excluded.data")
            .bind(1, passageId)
            .bindBlob(2, blob.data(), blob.size())
            .run();
        return {};
    });
}

Result<std::vector<uint8_t>> TokenChoiceStore::get(int64_t passageId) {
    return guard<std::vector<uint8_t>>([&]() -> Result<std::vector<uint8_t>> {
        Statement s = m_db.prepare("SELECT data FROM token_choices WHERE passage_id = ?1");
        s.bind(1, passageId);
        if (!s.step())
            return std::vector<uint8_t>{};
        return s.columnBlob(0);
    });
}

} // namespace baton::storage
