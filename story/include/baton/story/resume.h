// Where a generation resumes on a story's current path.
#pragma once

#include "baton/story/error.h"

#include <baton/storage/database.h>
#include <baton/storage/records.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace baton::story {

// The saved states a generation can start from: those of this model, T, o, state
// format and window layout.
struct StateKey {
    std::string modelIdentity;
    int window = 0;
    int overlap = 0;
    int formatVersion = 0;
    int layout = 0; // storage::StoredState::layout (prompt.h: stateLayout)
};

// The current path and the deepest saved state on it for the key (none: the whole
// path is read again).
struct ResumePoint {
    std::vector<storage::Passage> path;
    std::optional<storage::StoredState> state;
    int64_t leaf() const { return path.empty() ? 0 : path.back().id; }
};

Result<ResumePoint> findResumePoint(storage::Database& db, int64_t storyId, const StateKey& key);

} // namespace baton::story
