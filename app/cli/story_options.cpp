#include "cli_support.h"
#include "sampling_options.h"
#include "story_subcommands.h"

#include <baton/engine/error.h>

#include <cerrno>
#include <cstdlib>

namespace baton::cli {

int64_t positiveId(const Args& args, const char* what) {
    const std::string& s = args.positional().at(0);
    char* end = nullptr;
    errno = 0;
    const long long id = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end || errno == ERANGE || id <= 0)
        throw UsageError(std::string(what) + " must be a positive integer, not '" + s + "'");
    return id;
}

void addStoryRunOptions(Args& args) {
    args.option("model", "DIR", "Use this model folder instead of the story's")
        .option("window", "T", "Window size (default: the story's settings, else the model's)")
        .option("overlap", "O", "Tokens kept from one window to the next (default: as --window)")
        .option("memory-layout", "every_window|once",
                "Where the memory is read: at the start of every window (the default), or once "
                "before the story (later windows see it only through the state)")
        .option("lore-budget", "N",
                "Tokens for all world-info entries together (default: the story's, else what "
                "leaves half of the window to the story beside the memory and the note)")
        .option("recall", "on|off",
                "Read the story's own past again when the recent text names it (default: the "
                "story's setting, on)")
        .option("recall-budget", "N",
                "Tokens for the recalled excerpts together (default: the story's, else a quarter "
                "of the window, within what world info leaves)")
        .option("recall-chunks", "N", "The most recalled excerpts in a window (1-16, default 3)")
        .flag("trim-sentences",
              "Cut a generation that stops in the middle of a sentence back to its last whole "
              "sentence (default: the story's setting)");
    addSamplingOptions(args);
}

StoryRun storyRun(const Args& args, const storage::Story& story) {
    auto parsed = story::parseSettings(story.settingsJson);
    if (!parsed)
        throw CliError("story " + std::to_string(story.id) + ": " + parsed.error().message);
    StoryRun run;
    run.settings = *parsed;
    applySamplingArgs(args, run.settings.sampling);
    if (args.has("seed"))
        run.settings.fixedSeed = true;
    if (args.has("window"))
        run.settings.windows.window = static_cast<int>(args.getInt("window", 0, 1 << 20));
    if (args.has("overlap"))
        run.settings.windows.overlap = static_cast<int>(args.getInt("overlap", 0, 1 << 20));
    if (args.has("memory-layout")) {
        const std::string layout = args.get("memory-layout");
        if (layout == story::memoryLayoutName(story::MemoryLayout::Once))
            run.settings.memory = story::MemoryLayout::Once;
        else if (layout == story::memoryLayoutName(story::MemoryLayout::EveryWindow))
            run.settings.memory = story::MemoryLayout::EveryWindow;
        else
            throw UsageError("--memory-layout must be every_window or once, not '" + layout + "'");
    }
    if (args.has("trim-sentences"))
        run.settings.trimSentences = true;
    if (args.has("lore-budget"))
        run.settings.loreBudget = static_cast<int>(args.getInt("lore-budget", 1, 1 << 20));
    if (args.has("recall")) {
        const std::string recall = args.get("recall");
        if (recall != "on" && recall != "off")
            throw UsageError("--recall must be on or off, not '" + recall + "'");
        run.settings.recall.enabled = recall == "on";
    }
    if (args.has("recall-budget"))
        run.settings.recall.budget = static_cast<int>(args.getInt("recall-budget", 1, 1 << 20));
    if (args.has("recall-chunks"))
        run.settings.recall.chunks =
            static_cast<int>(args.getInt("recall-chunks", 1, story::kMaxRecallChunks));
    run.modelPath = args.has("model") ? args.get("model") : story.modelPath;
    if (run.modelPath.empty()) // a story without a model writes with the bundled default
        run.modelPath = bundledModelDir(kDefaultModel);
    if (run.modelPath.empty())
        throw UsageError("story " + std::to_string(story.id) +
                         " has no model and the bundled default model is not installed: give "
                         "--model DIR (or create the story with --model)");
    return run;
}

void throwStoryError(const story::Error& error) {
    if (error.engine)
        check(engine::Result<void>(*error.engine));
    if (error.kind == story::ErrorKind::InvalidRequest)
        throw UsageError(error.message);
    throw CliError(story::describe(error));
}

} // namespace baton::cli
