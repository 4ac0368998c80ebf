#include <baton/storage/prompt_state_store.h>

#include "connection.h"
#include "statement.h"
#include "store_util.h"
#include "transaction.h"

namespace baton::storage {

Result<void> PromptStateStore::save(const std::string& owner, const std::string& prefixHash,
                                    int64_t tokens, const std::vector<uint8_t>& blob,
                                    int64_t maxBytes) {
    return guard<void>([&]() -> Result<void> {
        Transaction t(m_db);
        m_db.prepare("INSERT INTO prompt_states (owner, prefix_hash, tokens, data, bytes, used_at) "
                     "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (owner, prefix_hash, tokens) "
                     "DO UPDATE SET data = excluded.data, bytes = excluded.bytes, "
                     "used_at = excluded.used_at")
            .bind(1, owner)
            .bind(2, prefixHash)
            .bind(3, tokens)
            .bindBlob(4, blob.data(), blob.size())
            .bind(5, static_cast<int64_t>(blob.size()))
            .bind(6, nowMs())
            .run();
        // Oldest first until the rest fits (the newest always stays).
        int64_t total = m_db.queryInt("SELECT coalesce(sum(bytes), 0) FROM prompt_states");
        while (total > maxBytes) {
            Statement oldest = m_db.prepare("SELECT id, bytes FROM prompt_states ORDER BY "
                                            "used_at, id LIMIT 1 OFFSET 0");
            if (!oldest.step() || m_db.queryInt("SELECT count(*) FROM prompt_states") <= 1)
                break;
            const int64_t id = oldest.columnInt(0);
            total -= oldest.columnInt(1);
            m_db.prepare("DELETE FROM prompt_states WHERE id = ?1").bind(1, id).run();
        }
        t.commit();
        return {};
    });
}

Result<std::optional<std::vector<uint8_t>>>
PromptStateStore::find(const std::string& owner, const std::string& prefixHash, int64_t tokens) {
    return guard<std::optional<std::vector<uint8_t>>>(
        [&]() -> Result<std::optional<std::vector<uint8_t>>> {
            Statement s = m_db.prepare("SELECT id, data FROM prompt_states WHERE owner = ?1 AND "
                                       "prefix_hash = ?2 AND tokens = ?3");
            s.bind(1, owner).bind(2, prefixHash).bind(3, tokens);
            if (!s.step())
                return std::optional<std::vector<uint8_t>>{};
            const int64_t id = s.columnInt(0);
            std::vector<uint8_t> blob = s.columnBlob(1);
            m_db.prepare("UPDATE prompt_states SET used_at = ?1 WHERE id = ?2")
                .bind(1, nowMs())
                .bind(2, id)
                .run();
            return std::optional<std::vector<uint8_t>>(std::move(blob));
        });
}

Result<bool> PromptStateStore::exists(const std::string& owner, const std::string& prefixHash,
                                      int64_t tokens) {
    return guard<bool>([&]() -> Result<bool> {
        Statement s = m_db.prepare("SELECT 1 FROM prompt_states WHERE owner = ?1 AND "
                                   "prefix_hash = ?2 AND tokens = ?3");
        s.bind(1, owner).bind(2, prefixHash).bind(3, tokens);
        return s.step();
    });
}

Result<std::vector<std::vector<uint8_t>>> PromptStateStore::recent(const std::string& owner,
                                                                   int limit) {
    return guard<std::vector<std::vector<uint8_t>>>(
        [&]() -> Result<std::vector<std::vector<uint8_t>>> {
            Statement s = m_db.prepare("SELECT data FROM prompt_states WHERE owner = ?1 ORDER BY "
                                       "used_at DESC, id DESC LIMIT ?2");
            s.bind(1, owner).bind(2, static_cast<int64_t>(limit));
            std::vector<std::vector<uint8_t>> out;
            while (s.step())
                out.push_back(s.columnBlob(0));
            return out;
        });
}

Result<void> PromptStateStore::remove(const std::string& owner, const std::string& prefixHash,
                                      int64_t tokens) {
    return guard<void>([&]() -> Result<void> {
        m_db.prepare("DELETE FROM prompt_states WHERE owner = ?1 AND prefix_hash = ?2 AND "
                     "tokens = ?3")
            .bind(1, owner)
            .bind(2, prefixHash)
            .bind(3, tokens)
            .run();
        return {};
    });
}

Result<std::vector<int64_t>> PromptStateStore::lengths(const std::string& owner) {
    return guard<std::vector<int64_t>>([&]() -> Result<std::vector<int64_t>> {
        Statement s = m_db.prepare("SELECT DISTINCT tokens FROM prompt_states WHERE owner = ?1 "
                                   "ORDER BY tokens DESC");
        s.bind(1, owner);
        std::vector<int64_t> out;
        while (s.step())
            out.push_back(s.columnInt(0));
        return out;
    });
}

Result<int64_t> PromptStateStore::totalBytes() {
    return guard<int64_t>([&]() -> Result<int64_t> {
        return m_db.queryInt("SELECT coalesce(sum(bytes), 0) FROM prompt_states");
    });
}

} // namespace baton::storage
