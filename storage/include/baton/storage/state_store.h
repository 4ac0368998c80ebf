// The engine's recurrent-state blobs, keyed by passage: a state saved at passage P
// is the generator's state after the text of the path from the root to P. States
// of an edited passage and its descendants are deleted by StoryStore::editPassage
// (and come back with StoryStore::undoEdit).
#pragma once

#include "baton/storage/error.h"
#include "baton/storage/records.h"

#include <optional>
#include <string>
#include <vector>

namespace baton::storage {

class Connection;

class StateStore {
public:
    explicit StateStore(Connection& connection)
        : m_db(connection) {}

    // Saves state (blob included), replacing one with the same passage, model, T, o
    // and format version (whatever its layout: a passage's state is made once, by the
    // generation that wrote it). Returns the id.
    Result<int64_t> save(const StoredState& state);
    // The states of a passage, without blobs.
    Result<std::vector<StoredState>> forPassage(int64_t passageId);
    // The state (with its blob) of the deepest passage on the path ending at leafId
    // that matches the model, T, o, format version and layout; nullopt when there is none.
    Result<std::optional<StoredState>> latestOnPath(int64_t leafId,
                                                    const std::string& modelIdentity, int window,
                                                    int overlap, int formatVersion, int layout = 0);
    // The states (without blobs) on the path ending at leafId that match the model, T, o,
    // format version and layout, root first.
    Result<std::vector<StoredState>> onPath(int64_t leafId, const std::string& modelIdentity,
                                            int window, int overlap, int formatVersion,
                                            int layout = 0);
    // Keeps one state per finished window on a path, and every state of the open one:
    // after saving `kept` (in window w), deletes the states of its ancestors in windows
    // before w that have a deeper state in the same window, for the same model, T, o,
    // format version and layout, except at branch points (passages with more than one
    // child), whose state other branches resume from. An edit in the open window then
    // resumes from the chunk before it (reading at most the window again and the edited
    // text), one in an older window from the end of the window before, and a long story
    // keeps about one state per window instead of one per chunk. Returns how many were
    // deleted.
    Result<int64_t> pruneAncestors(const StoredState& kept);
    // Deletes the states of passageId and of all its descendants; returns how many.
    Result<int64_t> invalidateFrom(int64_t passageId);
    // Deletes them and returns them (with their blobs when `withBlobs`), root first.
    Result<std::vector<StoredState>> takeFrom(int64_t passageId, bool withBlobs = true);
    // Saves states taken before (as save() does, keeping their creation time), except
    // those whose passage no longer exists; returns how many were saved.
    Result<int64_t> restore(const std::vector<StoredState>& states);
    // All states of a story (without blobs).
    Result<int64_t> countForStory(int64_t storyId);

private:
    Connection& m_db;
};

} // namespace baton::storage
