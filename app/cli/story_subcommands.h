// What the `story` subcommands share, and the subcommands that live in their own files
// (cmd_story_lore.cpp, cmd_story_context.cpp, cmd_story_tokens.cpp; the rest are in
// cmd_story.cpp).
#pragma once

#include "args.h"

#include <baton/storage/records.h>
#include <baton/story/error.h>
#include <baton/story/settings.h>

#include <cstdint>
#include <string>
#include <vector>

namespace baton::cli {

// The first positional as a story (or entry) id; `what` names it in the error.
int64_t positiveId(const Args& args, const char* what = "ID");

// --model, --window, --overlap, --memory-layout, --lore-budget, --recall, --recall-budget,
// --recall-chunks and the sampling options:
// how a story runs, overriding its saved settings.
void addStoryRunOptions(Args& args);
struct StoryRun {
    story::StorySettings settings; // the story's, with the command line's overrides
    std::string modelPath;         // --model, else the story's, else the bundled default
};
StoryRun storyRun(const Args& args, const storage::Story& story);
// Throws the CLI's error for a story error (usage errors for bad requests).
[[noreturn]] void throwStoryError(const story::Error& error);

int storyLore(const std::vector<std::string>& argv);
int storyContext(const std::vector<std::string>& argv);
int storyTokens(const std::vector<std::string>& argv);

} // namespace baton::cli
