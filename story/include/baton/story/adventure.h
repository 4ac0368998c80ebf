// Adventure mode, the same for every client (the app's adventure bar, baton-cli story
// generate, any later one): the player's words are framed as text adventures print
// them, on a line of their own that starts with '>', and the model writes what
// happens and stops before the next '>' line, so it never plays the player's turn.
#pragma once

#include <baton/engine/sampling.h>
#include <baton/storage/records.h>

#include <string>
#include <string_view>

namespace baton::story {

enum class TurnKind { Do, Say, Story };

// The text a turn adds to a story whose text ends with `before` (its last two bytes
// are enough): a blank line first (unless the story is empty or already ends with
// one), then
//   Do "open the door"       -> "> You open the door.\n\n"
//   Do "I look around"       -> "> You look around.\n\n"
//   Say "where is the key"   -> "> You say, \u201cWhere is the key.\u201d\n\n"
//   Story "A storm rises."   -> "A storm rises."  (the model continues the paragraph)
// Runs of white space become one space. Only ASCII letters change case. Input that is
// empty after trimming (or only "I" / "you") gives "".
std::string frameTurn(TurnKind kind, std::string_view input, std::string_view before);

// What the model must not write in an adventure: the player's next turn.
inline constexpr const char* kAdventureStop = "\n>";

// The sampling a continuation of a story in `mode` runs with: `sampling`, and in an
// adventure also the stop before the player's next turn (once).
engine::SamplingOptions continuationSampling(storage::StoryMode mode,
                                             engine::SamplingOptions sampling);

} // namespace baton::story
