// What the model reads besides the story's passages: the memory (background text
// the story always starts from) and the author's note (guidance given just before
// each generation). One definition for the app and baton-cli, because the saved
// recurrent states depend on it: a state saved at passage P is the generator's
// state after memoryPrefix(story) followed by the text of the path to P (and any
// author's notes read on the way), so changing the memory invalidates the story's
// states (StoryStore::setMemory).
#pragma once

#include "baton/storage/records.h"

#include <string>

namespace baton::storage {

// "" without a memory; otherwise the memory and a paragraph break, to be encoded
// after the start-of-text token and before the first passage.
std::string memoryPrefix(const Story& story);

// "" without a note; otherwise the note in brackets on a line of its own, to be
// encoded after the story's text and before the model continues. It is read, not
// saved as story text.
std::string authorsNoteText(const Story& story);

} // namespace baton::storage
