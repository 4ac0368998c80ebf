// baton-cli story context: what the model reads when the story is continued next, laid
// out by the same plan `story generate` runs (story/context.h).
#include "cli_support.h"
#include "database_options.h"
#include "story_subcommands.h"

#include <baton/engine/text.h>
#include <baton/storage/story_store.h>
#include <baton/story/context.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace baton::cli {

namespace {

nlohmann::ordered_json viewJson(const story::ContextView& v) {
    nlohmann::ordered_json spans = nlohmann::ordered_json::array();
    for (const auto& s : v.spans)
        spans.push_back({{"kind", story::segmentKindName(s.kind)},
                         {"label", s.label},
                         {"tokens", s.tokens},
                         {"overlap", s.overlap},
                         {"carried", s.carried},
                         {"text", s.text}});
    nlohmann::ordered_json lore = nlohmann::ordered_json::array();
    for (const auto& m : v.lore.matches)
        lore.push_back(
            {{"id", m.entry.id}, {"key", m.key}, {"tokens", m.tokens}, {"placed", m.placed}});
    nlohmann::ordered_json costs = nlohmann::ordered_json::array();
    for (const auto& c : v.loreCosts)
        costs.push_back({{"id", c.id},
                         {"tokens", c.tokens},
                         {"fits", c.fits},
                         {"state", story::loreStateName(c.state)},
                         {"key", c.key}});
    nlohmann::ordered_json recalled = nlohmann::ordered_json::array();
    for (const auto& c : v.recall.chunks)
        recalled.push_back({{"passage", c.passageId},
                            {"chunk_start", c.chunkStart},
                            {"start", c.pathStart},
                            {"end", c.pathEnd},
                            {"window", story::windowAt(v, c.pathStart)},
                            {"score", c.score},
                            {"matched", c.matched},
                            {"tokens", c.tokens},
                            {"placed", c.placed},
                            {"text", c.text}});
    nlohmann::ordered_json recall = {{"enabled", v.recall.enabled},
                                     {"terms", v.recall.terms},
                                     {"budget", v.recall.budget},
                                     {"tokens", v.recall.tokens},
                                     {"window_start", v.recall.windowStart},
                                     {"chunks", recalled}};
    return {{"window", v.windows.window},
            {"overlap", v.windows.overlap},
            {"memory_layout", story::memoryLayoutName(v.layout)},
            {"memory_tokens", v.memoryTokens},
            {"pinned_tokens", v.pinnedTokens},
            {"note_tokens", v.noteTokens},
            {"guide_tokens", v.guideTokens},
            {"window_index", v.windowIndex},
            {"state_from_window", v.stateFromWindow},
            {"resumed_from_passage", v.resumedFromPassage},
            {"read_tokens", v.readTokens},
            {"read",
             {{"again", v.read.again},
              {"text", v.read.text},
              {"rollovers", v.read.rollovers},
              {"at_rollovers", v.read.atRollover},
              {"guide", v.read.guide}}},
            {"used", v.used},
            {"room", v.room},
            {"lore_budget", v.lore.budget},
            {"lore_tokens", v.lore.tokens},
            {"lore", lore},
            {"lore_entries", costs},
            {"recall", recall},
            {"spans", spans}};
}

void printView(const story::ContextView& v) {
    // Windows are counted from 1, as the app counts them (the JSON's indexes from 0).
    std::printf("window %lld of the story: T = %d, o = %d; %s\n",
                static_cast<long long>(v.windowIndex + 1), v.windows.window, v.windows.overlap,
                v.stateFromWindow >= 0
                    ? ("the state from window " + std::to_string(v.stateFromWindow + 1)).c_str()
                    : "no state (the first window, or a model without one)");
    if (v.layout == story::MemoryLayout::EveryWindow)
        std::printf("memory: in every window, %d tokens (start-of-text included)\n",
                    v.pinnedTokens);
    else
        std::printf("memory: read once at the start, %d tokens; later windows see it only "
                    "through the state\n",
                    v.memoryTokens);
    if (v.noteTokens > 0)
        std::printf("author's note: %d tokens, placed whole before every continuation\n",
                    v.noteTokens);
    if (v.resumedFromPassage)
        std::printf("resumes from the state saved at passage %lld: reads %d tokens\n",
                    static_cast<long long>(v.resumedFromPassage), v.readTokens);
    else
        std::printf("reads the story from the beginning: %d tokens\n", v.readTokens);
    std::printf("  %d the open window again, %d of story text, %d at %d roll-over(s), %d for the "
                "guidance\n",
                v.read.again, v.read.text, v.read.atRollover, v.read.rollovers, v.read.guide);
    std::printf("\n%7s  %-12s %s\n", "tokens", "kind", "what");
    for (const auto& s : v.spans)
        std::printf("%7d  %-12s %s%s\n", s.tokens, story::segmentKindName(s.kind), s.label.c_str(),
                    s.overlap   ? " (overlap: carried from the previous window)"
                    : s.carried ? " (the unfinished sentence, kept after the guidance)"
                                : "");
    std::printf("\n%d of %d positions in use; %d tokens until the window rolls over\n", v.used,
                v.windows.window, v.room);
    for (const auto& m : v.lore.matches)
        std::printf("world info %lld (%s): %d tokens, %s\n", static_cast<long long>(m.entry.id),
                    m.key.c_str(), m.tokens, m.placed ? "read" : "left out: over the budget");
    if (!v.lore.matches.empty())
        std::printf("world-info budget: %d of %d tokens\n", v.lore.tokens, v.lore.budget);
    if (!v.recall.enabled)
        std::printf("recall: off\n");
    for (const auto& c : v.recall.chunks) {
        std::string words;
        for (const auto& w : c.matched)
            words += (words.empty() ? "" : ", ") + w;
        std::printf("recalled from window %lld (passage %lld, matched %s): %d tokens, %s\n",
                    static_cast<long long>(story::windowAt(v, c.pathStart) + 1),
                    static_cast<long long>(c.passageId), words.c_str(), c.tokens,
                    c.placed ? "read" : "left out: over the budget");
    }
    if (!v.recall.chunks.empty())
        std::printf("recall budget: %d of %d tokens\n", v.recall.tokens, v.recall.budget);
    for (const auto& c : v.loreCosts) {
        const auto id = static_cast<long long>(c.id);
        if (c.state == story::LoreState::TooLong)
            std::printf("world info %lld: %d tokens, longer than the budget of %d: it can never "
                        "be read. Shorten it, or raise the budget or the window\n",
                        id, c.tokens, v.lore.budget);
        else if (c.state == story::LoreState::NoKey)
            std::printf("world info %lld: not read, none of its keys is in the last %d tokens\n",
                        id, c.scanDepth);
        else if (c.state == story::LoreState::NoSecondKey)
            std::printf("world info %lld: not read, %s is in the last %d tokens but none of its "
                        "secondary keys\n",
                        id, c.key.c_str(), c.scanDepth);
    }
}

} // namespace

int storyContext(const std::vector<std::string>& argv) {
    Args args("story context",
              "Show what the model reads when the story is continued next: the memory, the "
              "state (which window it comes from), the window's story text and overlap, the "
              "world info that fires, what is recalled from the story's past and the author's "
              "note, with token counts, and how much of the window is left. Computed by the plan "
              "'story generate' runs.");
    args.positionals("ID", "The story's id", 1, 1);
    addStoryRunOptions(args);
    args.option("text", "TEXT", "Text you would send with the continuation")
        .flag("json", "Print JSON, with each stretch's text");
    addDbOption(args);
    if (!args.parse(argv))
        return 0;
    const int64_t id = positiveId(args, "ID (a story id)");
    const std::string text = args.get("text");
    if (engine::firstInvalidUtf8(text) != std::string::npos)
        throw UsageError("--text is not valid UTF-8");
    auto db = openDatabase(args);
    auto story = db->stories().get(id);
    checkStorage(story);
    const StoryRun run = storyRun(args, *story);
    auto model = engine::Model::load(run.modelPath);
    check(model);
    auto plan = story::planContinuation(*db, **model, id, run.settings, text);
    if (!plan)
        throwStoryError(plan.error());
    auto view = story::describeContext(*plan, **model);
    if (!view)
        throwStoryError(view.error());
    if (args.has("json"))
        std::cout << viewJson(*view).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                  << "\n";
    else
        printView(*view);
    return 0;
}

} // namespace baton::cli
