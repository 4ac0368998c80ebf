// What the model reads to continue a story, in order: the memory, the story's
// passages, the author's note. One definition for the app, baton-cli and the server,
// because the saved recurrent states depend on it: a state saved at passage P is the
// generator's state after the memory, the text of the path up to P, and the author's
// notes read on the way (each generation reads the note once, after the story text
// and before the model continues). A new memory therefore invalidates a story's
// states (StoryStore::update deletes them).
#pragma once

#include <baton/storage/records.h>

#include <cstdint>
#include <string>
#include <vector>

namespace baton::story {

enum class SegmentKind {
    Memory,      // background text, before the first passage
    Passage,     // story text
    AuthorsNote, // guidance, read just before the model continues (never saved as text)
};

struct Segment {
    SegmentKind kind = SegmentKind::Passage;
    std::string text;
    int64_t passageId = 0; // Passage segments
};

struct Prompt {
    std::vector<Segment> segments;
    std::string text() const; // the segments' text in order
};

// "" without a memory; otherwise the memory and a paragraph break.
std::string memoryPrefix(const storage::Story& story);
// "" without a note; otherwise the note in brackets on a line of its own.
std::string authorsNoteText(const storage::Story& story);

// What continuing `path` reads after a saved state at passage `afterPassage` (the
// passages after it), or, with afterPassage 0, from the beginning (the memory and every
// passage); the author's note ends it either way.
Prompt continuationPrompt(const storage::Story& story, const std::vector<storage::Passage>& path,
                          int64_t afterPassage);

} // namespace baton::story
