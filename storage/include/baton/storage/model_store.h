// Registered models: checkpoint folders with a checksum and a configuration summary.
#pragma once

#include "baton/storage/error.h"
#include "baton/storage/records.h"

#include <optional>
#include <string>
#include <vector>

namespace baton::storage {

class Connection;

class ModelStore {
public:
    explicit ModelStore(Connection& connection)
        : m_db(connection) {}

    // Registers a folder (paths are unique: Constraint when already registered).
    Result<int64_t> add(const RegisteredModel& model);
    Result<RegisteredModel> get(int64_t id);
    Result<std::optional<RegisteredModel>> byPath(const std::string& path);
    Result<std::vector<RegisteredModel>> list();
    Result<void> update(const RegisteredModel& model); // name, checksum, config
    // Makes id the only default model (0 = none).
    Result<void> setDefault(int64_t id);
    Result<std::optional<RegisteredModel>> defaultModel();
    Result<void> remove(int64_t id);

private:
    Connection& m_db;
};

} // namespace baton::storage
