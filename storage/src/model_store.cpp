#include <baton/storage/model_store.h>

#include "connection.h"
#include "statement.h"
#include "store_util.h"
#include "transaction.h"

namespace baton::storage {

namespace {

constexpr const char* kColumns =
    "SELECT id, path, name, checksum, config_json, is_default, created_at FROM models ";

RegisteredModel readModel(const Statement& s) {
    return RegisteredModel{s.columnInt(0),  s.columnText(1),     s.columnText(2), s.columnText(3),
                           s.columnText(4), s.columnInt(5) != 0, s.columnInt(6)};
}

} // namespace

Result<int64_t> ModelStore::add(const RegisteredModel& model) {
    return guard<int64_t>([&]() -> Result<int64_t> {
        Transaction t(m_db);
        if (model.isDefault)
            m_db.exec("UPDATE models SET is_default = 0 WHERE is_default = 1");
        m_db.prepare("INSERT INTO models (path, name, checksum, config_json, is_default, "
                     "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
            .bind(1, model.path)
            .bind(2, model.name)
            .bind(3, model.checksum)
            .bind(4, model.configJson.empty() ? std::string("{}") : model.configJson)
            .bind(5, int64_t(model.isDefault ? 1 : 0))
            .bind(6, nowMs())
            .run();
        const int64_t id = m_db.lastInsertId();
        t.commit();
        return id;
    });
}

Result<RegisteredModel> ModelStore::get(int64_t id) {
    return guard<RegisteredModel>([&]() -> Result<RegisteredModel> {
        Statement s = m_db.prepare(std::string(kColumns) + "WHERE id = ?1");
        s.bind(1, id);
        if (!s.step())
            throwNotFound("model", id);
        return readModel(s);
    });
}

Result<std::optional<RegisteredModel>> ModelStore::byPath(const std::string& path) {
    return guard<std::optional<RegisteredModel>>([&]() -> Result<std::optional<RegisteredModel>> {
        Statement s = m_db.prepare(std::string(kColumns) + "WHERE path = ?1");
        s.bind(1, path);
        if (!s.step())
            return std::optional<RegisteredModel>{};
        return std::optional<RegisteredModel>(readModel(s));
    });
}

Result<std::vector<RegisteredModel>> ModelStore::list() {
    return guard<std::vector<RegisteredModel>>([&]() -> Result<std::vector<RegisteredModel>> {
        Statement s = m_db.prepare(std::string(kColumns) + "ORDER BY name, path");
        std::vector<RegisteredModel> out;
        while (s.step())
            out.push_back(readModel(s));
        return out;
    });
}

Result<void> ModelStore::update(const RegisteredModel& model) {
    return guard<void>([&]() -> Result<void> {
        m_db.prepare("UPDATE models SET name = ?1, checksum = ?2, config_json = ?3 WHERE id = ?4")
            .bind(1, model.name)
            .bind(2, model.checksum)
            .bind(3, model.configJson.empty() ? std::string("{}") : model.configJson)
            .bind(4, model.id)
            .run();
        if (m_db.changes() == 0)
            throwNotFound("model", model.id);
        return {};
    });
}

Result<void> ModelStore::setDefault(int64_t id) {
    return guard<void>([&]() -> Result<void> {
        Transaction t(m_db);
        m_db.exec("UPDATE models SET is_default = 0 WHERE is_default = 1");
        if (id != 0) {
            m_db.prepare("UPDATE models SET is_default = 1 WHERE id = ?1").bind(1, id).run();
            if (m_db.changes() == 0)
                throwNotFound("model", id);
        }
        t.commit();
        return {};
    });
}

Result<std::optional<RegisteredModel>> ModelStore::defaultModel() {
    return guard<std::optional<RegisteredModel>>([&]() -> Result<std::optional<RegisteredModel>> {
        Statement s = m_db.prepare(std::string(kColumns) + "WHERE is_default = 1");
        if (!s.step())
            return std::optional<RegisteredModel>{};
        return std::optional<RegisteredModel>(readModel(s));
    });
}

Result<void> ModelStore::remove(int64_t id) {
    return guard<void>([&]() -> Result<void> {
        m_db.prepare("DELETE FROM models WHERE id = ?1").bind(1, id).run();
        if (m_db.changes() == 0)
            throwNotFound("model", id);
        return {};
    });
}

} // namespace baton::storage
