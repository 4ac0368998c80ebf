// Registered topic models: LDA models fitted on books, saved as files by the engine
// (baton::engine::TopicModel::save) and listed here. Schema version 2.
#pragma once

#include "baton/storage/error.h"
#include "baton/storage/records.h"

#include <optional>
#include <string>
#include <vector>

namespace baton::storage {

class Connection;

class TopicStore {
public:
    explicit TopicStore(Connection& connection)
        : m_db(connection) {}

    // Registers a topic model file; registering the same path again replaces the
    // record (a model fitted again to the same file). Returns the id.
    Result<int64_t> add(const TopicModelRecord& record);
    Result<std::optional<TopicModelRecord>> byPath(const std::string& path);
    // Newest first.
    Result<std::vector<TopicModelRecord>> list();
    Result<void> remove(int64_t id);

private:
    Connection& m_db;
};

} // namespace baton::storage
