// baton-cli story: stories in the SQLite database (storage/), and generation that
// continues a story on its current path, saving each chunk and the recurrent state
// after it as it goes.
#include "cli_support.h"
#include "commands.h"
#include "database_options.h"
#include "sampling_options.h"
#include "story_subcommands.h"

#include <baton/engine/books.h>
#include <baton/engine/sampling.h>
#include <baton/engine/text.h>
#include <baton/storage/database.h>
#include <baton/storage/state_store.h>
#include <baton/storage/story_store.h>
#include <baton/story/edit.h>
#include <baton/story/import.h>
#include <baton/story/settings.h>
#include <baton/story/story_service.h>

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>

namespace baton::cli {

namespace {

int64_t storyId(const Args& args) {
    return positiveId(args, "ID (a story id)");
}

std::string isoTime(int64_t ms) {
    const std::time_t t = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

storage::StoryMode parseMode(const std::string& name) {
    const auto mode = storage::storyModeFromName(name);
    if (!mode)
        throw UsageError("--mode must be story or adventure, not '" + name + "'");
    return *mode;
}

int storyNew(const std::vector<std::string>& argv) {
    Args args("story new", "Create an empty story; prints its id.");
    args.option("title", "T", "The story's title")
        .option("mode", "story|adventure", "Story or adventure (turns of action and reply)",
                "story")
        .option("model", "DIR", "The model folder the story generates with")
        .option("memory", "TEXT", "Background the model reads before the story, always")
        .option("note", "TEXT", "Author's note: guidance read just before each generation");
    addDbOption(args);
    if (!args.parse(argv))
        return 0;
    if (!args.has("title") || args.get("title").empty())
        throw UsageError("--title T is required");
    for (const char* name : {"title", "memory", "note"})
        if (args.has(name) && engine::firstInvalidUtf8(args.get(name)) != std::string::npos)
            throw UsageError(std::string("--") + name + " is not valid UTF-8");
    storage::Story story;
    story.title = args.get("title");
    if (args.has("memory"))
        story.memory = args.get("memory");
    if (args.has("note"))
        story.authorsNote = args.get("note");
    story.mode = parseMode(args.get("mode"));
    story.modelPath = args.get("model");
    auto db = openDatabase(args);
    auto id = db->stories().create(story);
    checkStorage(id);
    std::cout << *id << "\n";
    return 0;
}

int storyList(const std::vector<std::string>& argv) {
    Args args("story list", "List the stories, most recently changed first: one line each with "
                            "the id, mode, last change (UTC) and title, separated by tabs.");
    addDbOption(args);
    args.flag("json", "Print a JSON array of stories");
    if (!args.parse(argv))
        return 0;
    auto db = openDatabase(args);
    auto stories = db->stories().list();
    checkStorage(stories);
    if (args.has("json")) {
        nlohmann::ordered_json out = nlohmann::ordered_json::array();
        for (const auto& s : *stories)
            out.push_back({{"id", s.id},
                           {"title", s.title},
                           {"mode", storage::storyModeName(s.mode)},
                           {"model", s.modelPath},
                           {"updated", isoTime(s.updatedAt)}});
        std::cout << out.dump() << "\n";
        return 0;
    }
    for (const auto& s : *stories)
        std::cout << s.id << "\t" << storage::storyModeName(s.mode) << "\t" << isoTime(s.updatedAt)
                  << "\t" << escapeTsv(s.title) << "\n";
    return 0;
}

int storyShow(const std::vector<std::string>& argv) {
    Args args("story show", "Show a story's details and the text of its current path.");
    args.positionals("ID", "The story's id", 1, 1);
    addDbOption(args);
    if (!args.parse(argv))
        return 0;
    const int64_t id = storyId(args);
    auto db = openDatabase(args);
    auto story = db->stories().get(id);
    checkStorage(story);
    auto path = db->stories().currentPath(id);
    checkStorage(path);
    auto count = db->stories().passageCount(id);
    checkStorage(count);
    auto states = db->states().countForStory(id);
    checkStorage(states);
    std::string text;
    for (const auto& p : *path)
        text += p.text;
    std::cout << "id: " << story->id << "\n"
              << "title: " << story->title << "\n"
              << "mode: " << storage::storyModeName(story->mode) << "\n"
              << "model: " << story->modelPath << "\n"
              << "created: " << isoTime(story->createdAt) << "\n"
              << "updated: " << isoTime(story->updatedAt) << "\n"
              << "passages: " << path->size() << " on the current path, " << *count << " in all\n"
              << "saved states: " << *states << "\n";
    // Multi-line notes: the lines after the first indented under their label.
    auto field = [](const char* label, const std::string& value) {
        if (value.empty())
            return;
        std::string indented;
        for (char c : value)
            indented += c == '\n' ? std::string("\n  ") : std::string(1, c);
        std::cout << label << ": " << indented << "\n";
    };
    field("memory", story->memory);
    field("author's note", story->authorsNote);
    std::cout << "\n" << text << "\n";
    return 0;
}

int storyExport(const std::vector<std::string>& argv) {
    Args args("story export", "Write the text of a story's current path: md starts with the title "
                              "as a '# ' heading and a blank line; txt is the text alone.");
    args.positionals("ID", "The story's id", 1, 1);
    args.option("format", "md|txt", "Output format", "md")
        .option("output", "FILE", "Write to FILE instead of standard output");
    addDbOption(args);
    if (!args.parse(argv))
        return 0;
    const std::string format = args.get("format");
    if (format != "md" && format != "txt")
        throw UsageError("--format must be md or txt, not '" + format + "'");
    const int64_t id = storyId(args);
    auto db = openDatabase(args);
    auto story = db->stories().get(id);
    checkStorage(story);
    auto text = db->stories().currentText(id);
    checkStorage(text);
    const std::string out = story::exportedText(story->title, *text,
                                                format == "md" ? story::ExportFormat::Markdown
                                                               : story::ExportFormat::Text);
    if (args.has("output")) {
        std::ofstream f(args.get("output"), std::ios::binary | std::ios::trunc);
        f << out;
        f.close();
        if (!f)
            throw CliError("cannot write " + args.get("output"));
    } else {
        std::cout << out;
    }
    return 0;
}

int storyImport(const std::vector<std::string>& argv) {
    Args args("story import",
              "Create a story from a book: a UTF-8 text file (md or txt; '-' reads standard "
              "input) or an EPUB (its chapters in reading order, without markup; DRM-protected "
              "files are refused); prints its id. The EPUB's title, or a text file's '# ' "
              "heading, else the file's name gives the title. Hard-wrapped text (Project "
              "Gutenberg's ~70 columns) is joined into paragraphs. Invalid UTF-8 is refused.");
    args.positionals("FILE", "The file to import", 1, 1);
    args.option("title", "T", "The title (overrides the heading)")
        .flag("keep-line-breaks", "Keep a text file's line breaks as they are")
        .option("mode", "story|adventure", "Story or adventure", "story")
        .option("model", "DIR", "The model folder the story generates with");
    addDbOption(args);
    if (!args.parse(argv))
        return 0;
    const std::string file = args.positional()[0];
    const bool unwrap = !args.has("keep-line-breaks");
    story::ImportedStory imported;
    if (file == "-") { // standard input: text only
        std::string text = readText(file);
        imported = story::storyFromText(unwrap ? engine::unwrapText(text) : text, "");
    } else {
        auto read = story::importBook(file, unwrap);
        if (!read)
            throwStoryError(read.error());
        imported = std::move(*read);
    }
    std::string title = std::move(imported.title);
    const std::string text = std::move(imported.text);
    if (args.has("title"))
        title = args.get("title");
    if (title.empty())
        title = "Untitled";
    storage::Story story;
    story.title = title;
    story.mode = parseMode(args.get("mode"));
    story.modelPath = args.get("model");
    auto db = openDatabase(args);
    int64_t id = 0;
    checkStorage(db->transaction([&]() -> storage::Result<void> {
        auto created = db->stories().create(story);
        if (!created)
            return created.error();
        id = *created;
        if (!text.empty()) {
            auto passage = db->stories().append(id, text, storage::PassageAuthor::User);
            if (!passage)
                return passage.error();
        }
        return {};
    }));
    std::cout << id << "\n";
    return 0;
}

int storyEdit(const std::vector<std::string>& argv) {
    Args args("story edit",
              "Replace the last occurrence of OLD in the text of the story's current path with "
              "NEW. Only the passages whose text changes are rewritten; the saved states after "
              "the first of them are deleted, those before it kept, so the next 'story "
              "generate' resumes from the last state before the edit.");
    args.positionals("ID", "The story's id", 1, 1);
    args.option("find", "OLD", "The text to replace (its last occurrence)")
        .option("replace", "NEW", "What replaces it (may be empty)")
        .flag("json", "Print the edited passages and the states deleted as JSON");
    addDbOption(args);
    if (!args.parse(argv))
        return 0;
    const int64_t id = storyId(args);
    if (!args.has("find") || args.get("find").empty())
        throw UsageError("--find OLD is required and may not be empty");
    if (!args.has("replace"))
        throw UsageError("--replace NEW is required (it may be empty: --replace '')");
    for (const char* name : {"find", "replace"})
        if (engine::firstInvalidUtf8(args.get(name)) != std::string::npos)
            throw UsageError(std::string("--") + name + " is not valid UTF-8");
    auto db = openDatabase(args);
    checkStorage(db->stories().get(id));
    const auto r = story::findAndReplace(*db, id, args.get("find"), args.get("replace"));
    if (!r)
        throwStoryError(r.error());
    if (args.has("json")) {
        nlohmann::ordered_json edited = nlohmann::ordered_json::array();
        for (const auto& e : r->edits)
            edited.push_back({{"passage", e.passageId}, {"text", e.after}});
        std::cout << nlohmann::ordered_json{{"edited", edited},
                                            {"states_deleted", r->statesDeleted}}
                         .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                  << "\n";
        return 0;
    }
    std::cout << "edited " << r->edits.size() << (r->edits.size() == 1 ? " passage" : " passages");
    for (const auto& e : r->edits)
        std::cout << (&e == &r->edits.front() ? " (" : ", ") << e.passageId;
    std::cout << (r->edits.empty() ? "" : ")") << "; " << r->statesDeleted << " saved "
              << (r->statesDeleted == 1 ? "state" : "states") << " deleted\n";
    return 0;
}

// --branch P:T:A.
story::TokenBranch branchArgument(const std::string& value) {
    story::TokenBranch b;
    long long p = 0, t = 0, a = 0;
    char end = 0;
    if (std::sscanf(value.c_str(), "%lld:%lld:%lld%c", &p, &t, &a, &end) != 3 || p <= 0 || t < 0 ||
        a < 0 || t > (1 << 30) || a > (1 << 30))
        throw UsageError("--branch wants PASSAGE:TOKEN:ALTERNATIVE (as 'story tokens' lists "
                         "them), not '" +
                         value + "'");
    b.passageId = p;
    b.token = int(t);
    b.alternative = int(a);
    return b;
}

int storyGenerate(const std::vector<std::string>& argv) {
    Args args("story generate",
              "Continue a story on its current path with the story's model and settings "
              "(the options given here override them), streaming the new text to standard "
              "output. The text is saved as it comes, in chunks (one transaction each), with "
              "the recurrent state after each chunk, so the next 'story generate' resumes from "
              "the saved state and re-encodes at most one window instead of the whole story. "
              "Without a fixed seed (here or in the story's settings) every run draws a new one "
              "and prints it.");
    args.positionals("ID", "The story's id", 1, 1);
    addStoryRunOptions(args);
    args.flag("retry", "Write an alternative to the last generation instead of continuing")
        .option("branch", "P:T:A",
                "First branch at token T of passage P with its alternative A (see 'story "
                "tokens'), then continue from there")
        .option("chunk-tokens", "N", "Save a chunk (and a state) about every N tokens", "16")
        .option("alternatives", "N",
                "Token alternatives recorded per generated token and saved with the story "
                "(0-20; 0: none; see 'story tokens')",
                std::to_string(story::kRecordedAlternatives))
        .option("threads", "N",
                "Compute threads (default: all cores); decoding uses fewer while other programs "
                "keep cores busy",
                "0")
        .flag("quiet", "Do not print statistics to standard error");
    addDbOption(args);
    if (!args.parse(argv))
        return 0;
    const int64_t id = storyId(args);
    auto db = openDatabase(args);
    auto story = db->stories().get(id);
    checkStorage(story);

    // The story's settings, then what the command line gives.
    const StoryRun run = storyRun(args, *story);
    story::ContinueRequest request;
    request.storyId = id;
    request.retry = args.has("retry");
    if (args.has("branch"))
        request.branch = branchArgument(args.get("branch"));
    request.settings = run.settings;
    if (!request.settings.fixedSeed)
        request.settings.sampling.seed = engine::drawSeed();
    request.chunkTokens = static_cast<int>(args.getInt("chunk-tokens", 1, 1 << 20));
    request.alternatives = static_cast<int>(args.getInt("alternatives", 0, 20));

    engine::initializeRuntime(static_cast<int>(args.getInt("threads", 0, 1024)));
    auto loaded = engine::Model::load(run.modelPath);
    check(loaded);

    story::StoryService service(*db);
    auto onToken = [](const engine::GenerationEvent& e) {
        if (!e.text.empty())
            std::cout << e.text << std::flush;
        return true;
    };
    const auto r = service.continueStory(*loaded, request, onToken);
    std::cout << "\n" << std::flush;
    if (!r)
        throwStoryError(r.error());
    if (r->saveError)
        throw CliError("the story could not be saved: " + storage::describe(*r->saveError) +
                       " (the text above was generated; the chunks before the error are saved)");
    if (!args.has("quiet")) {
        if (!r->notice.empty())
            std::cerr << "[" << r->notice << "]\n";
        if (r->branchPassageId)
            std::cerr << "[branched: passage " << r->branchPassageId << "]\n";
        if (r->resumedFromPassage)
            std::cerr << "[resumed from the state saved at passage " << r->resumedFromPassage
                      << "; read " << r->readText.size() << " bytes after it, " << r->tokensRead
                      << " tokens in all]\n";
        else if (r->reusedGenerator)
            std::cerr << "[continued the last generation: read " << r->tokensRead << " tokens]\n";
        else
            std::cerr << "[read " << r->readText.size() << " bytes of story text, " << r->tokensRead
                      << " tokens in all]\n";
        if (r->trimmedBytes > 0)
            std::cerr << "[cut back " << r->trimmedBytes
                      << " bytes to the end of the last whole sentence]\n";
        for (const auto& m : r->lore.matches)
            std::cerr << "[world info " << (m.placed ? "read" : "left out (over the budget)")
                      << ": entry " << m.entry.id << ", key " << m.key << "]\n";
        const auto& g = r->generation;
        char line[240];
        std::snprintf(line, sizeof(line),
                      "[%zu tokens in %.2f s, %.1f tokens/s, stop: %s, seed %llu; saved %lld "
                      "chunks, %lld states]\n",
                      g.tokens.size(), g.seconds, g.tokensPerSecond,
                      engine::stopReasonName(g.reason),
                      static_cast<unsigned long long>(request.settings.sampling.seed),
                      static_cast<long long>(r->chunks), static_cast<long long>(r->states));
        std::cerr << line;
    }
    return 0;
}

void printStoryUsage(std::ostream& out) {
    out << "Usage: baton-cli [--db PATH] story SUBCOMMAND [options]\n\n"
           "Stories live in an SQLite database: --db PATH (before 'story' or among the\n"
           "subcommand's options), by default $XDG_DATA_HOME/baton/baton.db or\n"
           "~/.local/share/baton/baton.db.\n\n"
           "Subcommands:\n"
           "  new --title T [--mode story|adventure] [--model DIR]   create; prints the id\n"
           "      [--memory TEXT] [--note TEXT]\n"
           "  list [--json]                                          the stories\n"
           "  show ID                                                details and text\n"
           "  export ID --format md|txt [--output FILE]              the current path's text\n"
           "  import FILE [--title T] [--model DIR]                  a story from md, txt or epub\n"
           "  generate ID [--retry | --branch P:T:A] [sampling ...]  continue and save\n"
           "  edit ID --find OLD --replace NEW                       replace text, keep states\n"
           "  context ID [--text T] [--json]                         what the model reads next\n"
           "  tokens ID [--passage P] [--json]                       recorded token alternatives\n"
           "  lore list|add|edit|remove ...                          world info (lorebook)\n\n"
           "Run 'baton-cli story SUBCOMMAND --help' for a subcommand's options.\n";
}

} // namespace

int runStory(const std::vector<std::string>& argv) {
    if (argv.empty()) {
        printStoryUsage(std::cerr);
        return 2;
    }
    const std::string sub = argv[0];
    const std::vector<std::string> rest(argv.begin() + 1, argv.end());
    if (sub == "--help" || sub == "-h") {
        printStoryUsage(std::cout);
        return 0;
    }
    if (sub == "new")
        return storyNew(rest);
    if (sub == "list")
        return storyList(rest);
    if (sub == "show")
        return storyShow(rest);
    if (sub == "export")
        return storyExport(rest);
    if (sub == "import")
        return storyImport(rest);
    if (sub == "generate")
        return storyGenerate(rest);
    if (sub == "edit")
        return storyEdit(rest);
    if (sub == "context")
        return storyContext(rest);
    if (sub == "lore")
        return storyLore(rest);
    if (sub == "tokens")
        return storyTokens(rest);
    throw UsageError("unknown story subcommand '" + sub + "' (see baton-cli story --help)");
}

} // namespace baton::cli
