// The token alternatives recorded with generated passages (schema v6): one opaque
// blob per passage, whose format the story module owns (story/token_choices.h), as
// the engine owns the state blobs'. Deleting a passage deletes its blob.
#pragma once

#include "baton/storage/error.h"

#include <cstdint>
#include <vector>

namespace baton::storage {

class Connection;

class TokenChoiceStore {
public:
    explicit TokenChoiceStore(Connection& connection)
        : m_db(connection) {}

    // Stores (or replaces) the passage's blob; an empty blob deletes it.
    Result<void> set(int64_t passageId, const std::vector<uint8_t>& blob);
    // The passage's blob; empty when none was recorded.
    Result<std::vector<uint8_t>> get(int64_t passageId);

private:
    Connection& m_db;
};

} // namespace baton::storage
