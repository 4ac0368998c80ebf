// The next continuation of a story, planned before anything is generated: the
// windows, what every window holds beside the story (the memory, the guidance: world
// info and the author's note), where it resumes, which world info fires and what is
// read. StoryService::continueStory runs the plan; describeContext lays it out for the
// context viewer, the status bar and the window ruler. One plan for all, so what they
// show is exactly what the model reads.
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

// The memory read in every window may take at most half of T.
constexpr int kMaxPinnedShare = 2;
// Beside the memory, the overlap and the guidance, every window a generation writes in
// leaves at least an eighth of T to new text (baton-mini's loss hardly falls after its
// first 16 positions; the state carries the rest).
constexpr int kMinNewTextShare = 8;
// With the automatic world-info budget (the setting 0), the memory read in every
// window, the author's note and world info together leave at least half of T to the
// story (they may take more only when the memory and the note alone do).
constexpr int kDefaultStoryShare = 2;
// Guidance goes before an unfinished last sentence of at most a quarter of T.
constexpr int kMaxTailShare = 4;

// What every window of a story holds beside its text, for this model and settings.
struct WindowLayout {
    engine::WindowSettings windows;
    std::vector<int32_t> pinned; // start-of-text and the memory (EveryWindow), else none
    int memoryTokens = 0;        // the memory's tokens (in either layout)
    int noteTokens = 0;          // the author's note, before every continuation
    int loreBudget = 0;          // what world info may take beside it
    int recallBudget = 0;        // what recalled excerpts may take (recall.h)
    // World info and recalled excerpts together: with the automatic world-info budget
    // they share it (recall takes what world info leaves), else the two budgets' sum.
    int guideBudget = 0;
    // Tokens a window leaves to the story's text when the note and the whole budget of
    // world info and recall are placed in it.
    int storyRoom() const {
        return windows.window - static_cast<int>(pinned.size()) - noteTokens - guideBudget;
    }
};

// The windows a story runs with for this model, what every window starts with, and the
// room the guidance may take: the note's tokens, and the world-info budget (the
// setting, or for 0 what leaves half of T to the story beside the memory and the note)
// within what leaves an eighth of T to new text; recall's budget (the setting, or for 0
// a quarter of T) within what world info leaves of that.
// Refuses bad windows, a memory too long to be read in every window (the error says to
// shorten it or read it once) and a note too long for the window. Cheap: no database
// reads (what a continuation checks before it saves anything).
Result<WindowLayout> windowLayout(const storage::Story& story, const engine::Model& model,
                                  const StorySettings& settings);

// Whether a world-info entry is read in the next window, and if not, why.
enum class LoreState {
    Read,        // a key fired it and it is placed
    NoKey,       // none of its keys is in the recent text (its last scanDepth tokens)
    NoSecondKey, // a key is there, but none of its secondary keys
    NoRoom,      // it fired, but the entries placed before it left too little budget
    TooLong,     // longer than the whole budget: it can never be read
};
const char* loreStateName(LoreState state); // "read", "no_key", ... (stable: JSON)

// One world-info entry's cost, fired or not: what the World info dock shows.
struct LoreCost {
    int64_t id = 0;
    int tokens = 0;
    bool fits = true; // false: longer than the budget, so it can never be placed
    LoreState state = LoreState::NoKey;
    std::string key; // what fired it (Read, NoRoom; the first key for NoSecondKey)
    int scanDepth = 0;
};

struct ContinuationPlan {
    storage::Story story;
    WindowLayout room;              // the windows, the pinned tokens and the budgets
    engine::WindowSettings windows; // = room.windows
    MemoryLayout layout = MemoryLayout::EveryWindow;
    std::vector<int32_t> pinned;     // = room.pinned
    ResumePoint point;               // the current path and the deepest saved state on it
    StateKey key;                    // the saved states this plan can resume from
    LoreSelection lore;              // triggered by the path's text and `pending`
    RecallSelection recall;          // the story's past the recent text asks for
    std::string pending;             // text that would be sent with the continuation
    std::vector<int32_t> guide;      // the guidance's tokens: world info, recalled, the note
    std::vector<int> guideParts;     // tokens of each of promptAfter()'s guide segments
    size_t tailBytes = 0;            // the unfinished sentence the guidance goes before
    std::vector<LoreCost> loreCosts; // every enabled entry with text, in the story's order
    std::vector<storage::StoredState> pathStates; // the path's states for `key` (no blobs)

    // What is read after a saved state at passage afterPassage (0: from the beginning).
    Prompt promptAfter(int64_t afterPassage) const;
};

// Plans the next continuation of storyId. `pending` is text to be sent with it (it
// triggers world info and is read after the path). Refuses what windowLayout refuses.
Result<ContinuationPlan> planContinuation(storage::Database& db, const engine::Model& model,
                                          int64_t storyId, const StorySettings& settings,
                                          const std::string& pending = {});

// How many of the last `tokens` make up the last `bytes` bytes of their text (all of
// them when their text is shorter).
int64_t tokensCovering(const std::vector<int32_t>& tokens, size_t bytes,
                       const engine::Tokenizer& tokenizer);

// One stretch of the open window, of one kind.
struct ContextSpan {
    SegmentKind kind = SegmentKind::Passage;
    std::string label; // "memory (every window)", "world info: Elinor", ...
    std::string text;  // the stretch's text
    int tokens = 0;
    bool overlap = false; // the overlap: the previous window's last o tokens
    // The unfinished last sentence, kept when the window rolled over to make room for
    // the guidance, which goes before it (at any o).
    bool carried = false;
};

// What the model reads before it generates, by reason (they add up to readTokens).
struct ReadTokens {
    int again = 0;      // the open window again, from a saved state (its pinned tokens too)
    int text = 0;       // the story text after the state (or all of it)
    int rollovers = 0;  // windows the text fills on the way
    int atRollover = 0; // what each new window reads first: the memory and what it keeps
    int guide = 0;      // the guidance, and the text after its place read again
    int total() const { return again + text + atRollover + guide; }
};

// The window the model reads when it starts to generate.
struct ContextView {
    engine::WindowSettings windows;
    MemoryLayout layout = MemoryLayout::EveryWindow;
    int pinnedTokens = 0;              // at the start of every window
    int memoryTokens = 0;              // the memory's tokens (in either layout)
    int noteTokens = 0;                // the author's note's
    int guideTokens = 0;               // world info and the note placed in the window
    bool hasState = false;             // a recurrent state enters the open window
    int64_t stateFromWindow = -1;      // the window it summarises (-1: no state)
    int64_t windowIndex = 0;           // the open window's index in the story's stream
    int64_t resumedFromPassage = 0;    // the saved state it starts from (0: none)
    int readTokens = 0;                // tokens the model reads before it generates
    ReadTokens read;                   // ... by reason
    std::vector<ContextSpan> spans;    // the open window, in order
    std::vector<int32_t> streamTokens; // its stream tokens (the guidance left out)
    int used = 0;                      // positions in use
    int room = 0;                      // tokens left before the window rolls over
    LoreSelection lore;
    RecallSelection recall;
    std::vector<LoreCost> loreCosts; // every enabled entry, in the story's order
    // Where each window of the story's stream, 0 to windowIndex, begins: a byte offset
    // into the text of the path and the text not sent yet. The open window's is where its
    // stream tokens begin; an earlier window's is the end of the last passage saved with
    // a state in the window before it (to the chunk), else a stride of re-read text on.
    std::vector<int64_t> windowStarts;
};

// The index of the window of the story's stream that holds byte `offset` of the path's
// text (by ContextView::windowStarts).
int64_t windowAt(const ContextView& view, int64_t offset);

// Lays out what the model reads when `plan` runs.
Result<ContextView> describeContext(const ContinuationPlan& plan, const engine::Model& model);

} // namespace baton::story
