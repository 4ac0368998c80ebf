// The next continuation of a story, planned before anything is generated: the
// windows, what every window starts with, where it resumes, which world info fires and
// what is read. StoryService::continueStory runs the plan; describeContext lays it out
// for the context viewer. One plan for both, so the viewer shows exactly what the model
// reads.
#pragma once

#include "baton/story/error.h"
#include "baton/story/lore.h"
#include "baton/story/prompt.h"
#include "baton/story/resume.h"
#include "baton/story/settings.h"

#include <baton/engine/model.h>
#include <baton/engine/windows.h>
#include <baton/storage/database.h>

#include <cstdint>
#include <string>
#include <vector>

namespace baton::story {

struct ContinuationPlan {
    storage::Story story;
    engine::WindowSettings windows; // resolved for the model
    MemoryLayout layout = MemoryLayout::EveryWindow;
    std::vector<int32_t> pinned; // every window starts with these (start-of-text, memory)
    ResumePoint point;           // the current path and the deepest saved state on it
    StateKey key;                // the saved states this plan can resume from
    LoreSelection lore;          // triggered by the path's text and `pending`
    std::string pending;         // text that would be sent with the continuation

    // What is read after a saved state at passage afterPassage (0: from the beginning).
    Prompt promptAfter(int64_t afterPassage) const;
};

// The memory read in every window may take at most half of T.
constexpr int kMaxPinnedShare = 2;

// The windows a story runs with for this model and what every window starts with
// (start-of-text and the memory, in the EveryWindow layout). Refuses bad windows, and a
// memory too long to be read in every window (the error says to shorten it or read it
// once). Cheap: no database reads (what a continuation checks before it saves anything).
struct WindowLayout {
    engine::WindowSettings windows;
    std::vector<int32_t> pinned;
};
Result<WindowLayout> windowLayout(const storage::Story& story, const engine::Model& model,
                                  const StorySettings& settings);

// Plans the next continuation of storyId. `pending` is text to be sent with it (it
// triggers world info and is read after the path). Refuses what windowLayout refuses.
Result<ContinuationPlan> planContinuation(storage::Database& db, const engine::Model& model,
                                          int64_t storyId, const StorySettings& settings,
                                          const std::string& pending = {});

// One stretch of the open window, of one kind.
struct ContextSpan {
    SegmentKind kind = SegmentKind::Passage;
    std::string label; // "memory (every window)", "world info: Elinor", ...
    std::string text;  // the stretch's text
    int tokens = 0;
    bool overlap = false; // carried over from the previous window
};

// The window the model reads when it starts to generate.
struct ContextView {
    engine::WindowSettings windows;
    MemoryLayout layout = MemoryLayout::EveryWindow;
    int pinnedTokens = 0;              // at the start of every window
    int memoryTokens = 0;              // the memory's tokens (in either layout)
    bool hasState = false;             // a recurrent state enters the open window
    int64_t stateFromWindow = -1;      // the window it summarises (-1: no state)
    int64_t windowIndex = 0;           // the open window's index in the story's stream
    int64_t resumedFromPassage = 0;    // the saved state it starts from (0: none)
    int readTokens = 0;                // tokens read after the saved state (or from the start)
    std::vector<ContextSpan> spans;    // the open window, in order
    std::vector<int32_t> streamTokens; // its tokens after the pinned ones
    int used = 0;                      // positions in use
    int room = 0;                      // tokens left before the window rolls over
    LoreSelection lore;
};

// Lays out what the model reads when `plan` runs.
Result<ContextView> describeContext(const ContinuationPlan& plan, const engine::Model& model);

} // namespace baton::story
