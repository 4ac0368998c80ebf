// A story's world info (schema v4): entries with keys, kept in the order they are
// placed. When an entry is read is the story layer's rule (story/lore.h).
#pragma once

#include "baton/storage/error.h"
#include "baton/storage/records.h"

#include <vector>

namespace baton::storage {

class Connection;

class LoreStore {
public:
    explicit LoreStore(Connection& connection)
        : m_db(connection) {}

    // Adds an entry to entry.storyId; returns its id. An entry needs at least one
    // non-empty key and a scan depth of at least one token.
    Result<int64_t> add(const LoreEntry& entry);
    // Rewrites every field of entry.id but its story.
    Result<void> update(const LoreEntry& entry);
    Result<void> remove(int64_t id);
    Result<LoreEntry> get(int64_t id);
    // A story's entries in the order they are placed (order, then id).
    Result<std::vector<LoreEntry>> list(int64_t storyId);

private:
    Connection& m_db;
};

} // namespace baton::storage
