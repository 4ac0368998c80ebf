#include "baton/story/resume.h"

#include <baton/storage/state_store.h>
#include <baton/storage/story_store.h>

namespace baton::story {

Result<ResumePoint> findResumePoint(storage::Database& db, int64_t storyId, const StateKey& key) {
    ResumePoint point;
    auto path = db.stories().currentPath(storyId);
    if (!path)
        return storageError(path.error());
    point.path = std::move(*path);
    if (point.path.empty())
        return point;
    auto state = db.states().latestOnPath(point.leaf(), key.modelIdentity, key.window, key.overlap,
                                          key.formatVersion, key.layout);
    if (!state)
        return storageError(state.error());
    point.state = std::move(*state);
    return point;
}

} // namespace baton::story
