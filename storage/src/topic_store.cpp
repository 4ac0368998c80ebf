#include <baton/storage/topic_store.h>

#include "connection.h"
#include "statement.h"
#include "store_util.h"

namespace baton::storage {

namespace {

constexpr const char* kColumns = "SELECT id, path, name, topics, vocabulary_size, summary, "
                                 "created_at FROM topic_models ";

TopicModelRecord readRecord(const Statement& s) {
    TopicModelRecord r;
    r.id = s.columnInt(0);
    r.path = s.columnText(1);
    r.name = s.columnText(2);
    r.topics = static_cast<int>(s.columnInt(3));
    r.vocabularySize = static_cast<int>(s.columnInt(4));
    r.summary = s.columnText(5);
    r.createdAt = s.columnInt(6);
    return r;
}

} // namespace

Result<int64_t> TopicStore::add(const TopicModelRecord& record) {
    return guard<int64_t>([&]() -> Result<int64_t> {
        m_db.prepare("INSERT INTO topic_models (path, name, topics, vocabulary_size, summary, "
                     "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (path) DO UPDATE "
                     "SET name = excluded.name, topics = excluded.topics, vocabulary_size = "
                     "excluded.vocabulary_size, summary = excluded.summary, created_at = "
                     "excluded.created_at")
            .bind(1, record.path)
            .bind(2, record.name)
            .bind(3, static_cast<int64_t>(record.topics))
            .bind(4, static_cast<int64_t>(record.vocabularySize))
            .bind(5, record.summary)
            .bind(6, nowMs())
            .run();
        Statement s = m_db.prepare("SELECT id FROM topic_models WHERE path = ?1");
        s.bind(1, record.path);
        s.step();
        return s.columnInt(0);
    });
}

Result<std::optional<TopicModelRecord>> TopicStore::byPath(const std::string& path) {
    return guard<std::optional<TopicModelRecord>>([&]() -> Result<std::optional<TopicModelRecord>> {
        Statement s = m_db.prepare(std::string(kColumns) + "WHERE path = ?1");
        s.bind(1, path);
        if (!s.step())
            return std::optional<TopicModelRecord>{};
        return std::optional<TopicModelRecord>(readRecord(s));
    });
}

Result<std::vector<TopicModelRecord>> TopicStore::list() {
    return guard<std::vector<TopicModelRecord>>([&]() -> Result<std::vector<TopicModelRecord>> {
        Statement s = m_db.prepare(std::string(kColumns) + "ORDER BY created_at DESC, id DESC");
        std::vector<TopicModelRecord> out;
        while (s.step())
            out.push_back(readRecord(s));
        return out;
    });
}

Result<void> TopicStore::remove(int64_t id) {
    return guard<void>([&]() -> Result<void> {
        m_db.prepare("DELETE FROM topic_models WHERE id = ?1").bind(1, id).run();
        if (m_db.changes() == 0)
            throwNotFound("topic model", id);
        return {};
    });
}

} // namespace baton::storage
