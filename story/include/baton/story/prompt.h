// What the model reads to continue a story, in order. One definition for the app,
// baton-cli and the context viewer, because the saved recurrent states
// depend on it byte for byte.
//
// With the memory in every window (MemoryLayout::EveryWindow, the default) every window
// starts with the start-of-text token and the memory (pinnedText), then the story. With
// the memory read once, it is read before the first passage and later windows see it
// only through the state. The world-info entries that fired (lore.h) and the author's
// note are the guidance (Prompt::guide): not part of the story's stream, they are
// placed whole just before the continuation (before an unfinished last sentence, so
// the model goes on with it) in every window a generation writes in
// (engine::Generator::setGuide), and never saved as text.
//
// A state saved at passage P is the generator's state after the path up to P; it records
// its layout (stateLayout), and a new memory invalidates a story's states
// (StoryStore::update deletes them).
#pragma once

#include "baton/story/lore.h"
#include "baton/story/recall.h"
#include "baton/story/settings.h"

#include <baton/storage/records.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace baton::story {

enum class SegmentKind {
    Memory,      // background text: before the first passage, or in every window
    Passage,     // story text (passageId 0: text not saved yet)
    WorldInfo,   // a lore entry that fired (loreId)
    AuthorsNote, // guidance, read just before the model continues
    Recalled,    // an excerpt of the story's past (recall.h; passageId: where it is from)
};
const char* segmentKindName(SegmentKind kind); // "memory", "passage", ...

struct Segment {
    SegmentKind kind = SegmentKind::Passage;
    std::string text;
    int64_t passageId = 0; // Passage and Recalled segments
    int64_t loreId = 0;    // WorldInfo segments
};

struct Prompt {
    std::vector<Segment> segments; // the stream: memory read once, passages, text not sent
    std::vector<Segment> guide;    // world info, recalled excerpts, then the author's note
    std::string text() const;      // the stream's text in order
};

// "" without a memory; otherwise the memory and a paragraph break.
std::string memoryPrefix(const storage::Story& story);
// "" without a note; otherwise the note in brackets on a line of its own.
std::string authorsNoteText(const storage::Story& story);
// What every window starts with (after start-of-text): the memory prefix in the
// EveryWindow layout, else "".
std::string pinnedText(const storage::Story& story, MemoryLayout layout);
// The layout a saved state records (storage::StoredState::layout): 1 when windows start
// with pinned text, else 0 (with an empty memory both layouts read the same).
int stateLayout(const storage::Story& story, MemoryLayout layout);

// Where the guidance goes in a story's text: the bytes at its end that stay between the
// guidance and the continuation, an unfinished last sentence (after the last line
// break, or after the last sentence end and the spaces after it); 0 when the text ends
// with a line break or a finished sentence.
size_t unfinishedTail(std::string_view text);

// What continuing `path` reads after a saved state at passage `afterPassage` (the
// passages after it), or, with afterPassage 0, from the beginning (the memory when it
// is read once, and every passage); then `pending` (text not saved yet) as a passage;
// and the guidance: the placed world-info entries, the placed recalled excerpts (in
// story order) and the author's note.
Prompt continuationPrompt(const storage::Story& story, const std::vector<storage::Passage>& path,
                          int64_t afterPassage, MemoryLayout layout, const LoreSelection& lore = {},
                          const std::string& pending = {}, const RecallSelection& recall = {});

} // namespace baton::story
