// baton-cli story lore: a story's world info (lorebook). Entries are read by `story
// generate` (and the app) when one of their keys occurs in the recent text; see
// story/lore.h for the rule.
#include "cli_support.h"
#include "database_options.h"
#include "story_subcommands.h"

#include <baton/engine/text.h>
#include <baton/storage/lore_store.h>
#include <baton/storage/story_store.h>
#include <baton/story/lore.h>

#include <nlohmann/json.hpp>

#include <iostream>

namespace baton::cli {

namespace {

void addEntryOptions(Args& args) {
    args.option("keys", "K1,K2", "Keys (comma-separated): any one in the recent text reads it")
        .option("secondary", "K1,K2",
                "Secondary keys: when given, one of them must occur too ('' for none)")
        .option("content", "TEXT", "What the model reads when the entry fires")
        .option("order", "N",
                "Entries are placed in ascending order (and kept first under "
                "the budget)")
        .option("depth", "N", "Scan depth: how many tokens of recent text are searched");
}

// Applies the entry options given to `e`.
void applyEntryOptions(const Args& args, storage::LoreEntry& e) {
    for (const char* name : {"keys", "secondary", "content"})
        if (args.has(name) && engine::firstInvalidUtf8(args.get(name)) != std::string::npos)
            throw UsageError(std::string("--") + name + " is not valid UTF-8");
    if (args.has("keys"))
        e.keys = story::splitKeys(args.get("keys"));
    if (args.has("secondary"))
        e.secondaryKeys = story::splitKeys(args.get("secondary"));
    if (args.has("content"))
        e.content = args.get("content");
    if (args.has("order"))
        e.order = static_cast<int>(args.getInt("order", -1000000, 1000000));
    if (args.has("depth"))
        e.scanDepth = static_cast<int>(args.getInt("depth", 1, 1 << 20));
    if (e.keys.empty())
        throw UsageError("an entry needs at least one key: --keys K1,K2");
}

int loreList(const std::vector<std::string>& argv) {
    Args args("story lore list", "List a story's world-info entries in the order they are "
                                 "placed: id, on/off, order, scan depth, keys, content.");
    args.positionals("ID", "The story's id", 1, 1).flag("json", "Print a JSON array");
    addDbOption(args);
    if (!args.parse(argv))
        return 0;
    const int64_t id = positiveId(args, "ID (a story id)");
    auto db = openDatabase(args);
    checkStorage(db->stories().get(id));
    auto entries = db->lore().list(id);
    checkStorage(entries);
    if (args.has("json")) {
        nlohmann::ordered_json out = nlohmann::ordered_json::array();
        for (const auto& e : *entries)
            out.push_back({{"id", e.id},
                           {"enabled", e.enabled},
                           {"order", e.order},
                           {"scan_depth", e.scanDepth},
                           {"keys", e.keys},
                           {"secondary_keys", e.secondaryKeys},
                           {"content", e.content}});
        std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return 0;
    }
    for (const auto& e : *entries)
        std::cout << e.id << "\t" << (e.enabled ? "on" : "off") << "\t" << e.order << "\t"
                  << e.scanDepth << "\t" << escapeTsv(story::joinKeys(e.keys))
                  << (e.secondaryKeys.empty() ? ""
                                              : " + " + escapeTsv(story::joinKeys(e.secondaryKeys)))
                  << "\t" << escapeTsv(e.content) << "\n";
    return 0;
}

int loreAdd(const std::vector<std::string>& argv) {
    Args args("story lore add", "Add a world-info entry to a story; prints its id.");
    args.positionals("ID", "The story's id", 1, 1);
    addEntryOptions(args);
    args.flag("disabled", "Add it switched off");
    addDbOption(args);
    if (!args.parse(argv))
        return 0;
    storage::LoreEntry e;
    e.storyId = positiveId(args, "ID (a story id)");
    applyEntryOptions(args, e);
    if (!args.has("content") || e.content.empty())
        throw UsageError("--content TEXT is required");
    e.enabled = !args.has("disabled");
    auto db = openDatabase(args);
    checkStorage(db->stories().get(e.storyId));
    auto added = db->lore().add(e);
    checkStorage(added);
    std::cout << *added << "\n";
    return 0;
}

int loreEdit(const std::vector<std::string>& argv) {
    Args args("story lore edit", "Change a world-info entry: only what is given changes.");
    args.positionals("ENTRY", "The entry's id (from 'story lore list')", 1, 1);
    addEntryOptions(args);
    args.flag("enable", "Switch it on").flag("disable", "Switch it off");
    addDbOption(args);
    if (!args.parse(argv))
        return 0;
    if (args.has("enable") && args.has("disable"))
        throw UsageError("--enable and --disable exclude each other");
    auto db = openDatabase(args);
    auto entry = db->lore().get(positiveId(args, "ENTRY (an entry id)"));
    checkStorage(entry);
    storage::LoreEntry e = *entry;
    applyEntryOptions(args, e);
    if (args.has("enable") || args.has("disable"))
        e.enabled = args.has("enable");
    checkStorage(db->lore().update(e));
    return 0;
}

int loreRemove(const std::vector<std::string>& argv) {
    Args args("story lore remove", "Delete a world-info entry.");
    args.positionals("ENTRY", "The entry's id", 1, 1);
    addDbOption(args);
    if (!args.parse(argv))
        return 0;
    auto db = openDatabase(args);
    checkStorage(db->lore().remove(positiveId(args, "ENTRY (an entry id)")));
    return 0;
}

} // namespace

int storyLore(const std::vector<std::string>& argv) {
    static const char* usage =
        "Usage: baton-cli story lore SUBCOMMAND [options]\n\n"
        "A story's world info: entries read just before the model continues when one of\n"
        "their keys occurs in the recent text (whole words, any case).\n\n"
        "  list ID [--json]\n"
        "  add ID --keys K1,K2 --content TEXT [--secondary K] [--order N] [--depth N]\n"
        "      [--disabled]                       prints the entry's id\n"
        "  edit ENTRY [--keys ...] [--content ...] [--enable|--disable] ...\n"
        "  remove ENTRY\n";
    if (argv.empty()) {
        std::cerr << usage;
        return 2;
    }
    const std::string sub = argv[0];
    const std::vector<std::string> rest(argv.begin() + 1, argv.end());
    if (sub == "--help" || sub == "-h") {
        std::cout << usage;
        return 0;
    }
    if (sub == "list")
        return loreList(rest);
    if (sub == "add")
        return loreAdd(rest);
    if (sub == "edit")
        return loreEdit(rest);
    if (sub == "remove")
        return loreRemove(rest);
    throw UsageError("unknown story lore subcommand '" + sub +
                     "' (see baton-cli story lore --help)");
}

} // namespace baton::cli
