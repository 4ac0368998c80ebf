// Model generations of stories (schema v3): the boundaries that let a retry rewrite
// exactly the last generation after the story was reopened. A generation's passages
// carry its id (Passage::generationId).
#pragma once

#include "baton/storage/error.h"
#include "baton/storage/records.h"

#include <string>

namespace baton::storage {

class Connection;

class GenerationStore {
public:
    explicit GenerationStore(Connection& connection)
        : m_db(connection) {}

    // Records that a generation of storyId continues passage parentId (0: the
    // beginning) with these settings, having read these world-info entries (a JSON
    // array); returns its id.
    Result<int64_t> begin(int64_t storyId, int64_t parentId, const std::string& settingsJson,
                          const std::string& loreJson = "[]");
    Result<Generation> get(int64_t id);

private:
    Connection& m_db;
};

} // namespace baton::storage
