#include "args.h"
#include "commands.h"

#include <baton/engine/kept_weights.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <ctime>
#include <iostream>

namespace baton::cli {

namespace {

// In GiB, as the cap is given.
std::string gigabytes(int64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f GiB", double(bytes) / double(int64_t(1) << 30));
    return text;
}

std::string localTime(int64_t seconds) {
    const std::time_t t = std::time_t(seconds);
    std::tm tm{};
    char text[32] = "?";
    if (::localtime_r(&t, &tm) != nullptr)
        std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", &tm);
    return text;
}

} // namespace

int runCache(const std::vector<std::string>& argv) {
    Args args("cache", "List or clear the converted weights kept on disk.");
    args.flag("clear", "Remove every kept file (the next load in 8 or 4 bits converts again)");
    args.flag("json", "Print one JSON object");
    args.epilog("A load that converts a model's weights (--weights int8 or q4, or f16/bf16 from "
                "a file stored otherwise) keeps the result, so that the next load of that model "
                "in that format maps it instead of converting again. The least recently used "
                "files are removed to stay under the cap; deleting any of them is always safe.");
    if (!args.parse(argv))
        return 0;
    const std::string folder = engine::keptWeightsFolder();
    if (folder.empty()) {
        std::cerr << "error: no cache folder: neither XDG_CACHE_HOME nor HOME is set\n";
        return 1;
    }
    const auto kept = engine::keptWeights();
    int64_t total = 0;
    for (const auto& k : kept)
        total += k.bytes;
    if (args.has("clear")) {
        const int64_t freed = engine::clearKeptWeights();
        if (args.has("json"))
            std::cout << nlohmann::ordered_json{{"folder", folder},
                                                {"removed_files", kept.size()},
                                                {"freed_bytes", freed}}
                             .dump(2)
                      << "\n";
        else
            std::cout << "removed " << kept.size() << " kept file" << (kept.size() == 1 ? "" : "s")
                      << " from " << folder << ", " << gigabytes(freed) << " freed\n";
        return 0;
    }
    if (args.has("json")) {
        nlohmann::ordered_json files = nlohmann::ordered_json::array();
        for (const auto& k : kept)
            files.push_back({{"path", k.path},
                             {"model", k.model},
                             {"identity", k.identity},
                             {"format", k.format},
                             {"bytes", k.bytes},
                             {"last_used", k.lastUsed}});
        std::cout << nlohmann::ordered_json{{"folder", folder},
                                            {"cap_bytes", engine::keptWeightsCap()},
                                            {"bytes", total},
                                            {"files", files}}
                         .dump(2)
                  << "\n";
        return 0;
    }
    std::cout << "converted weights kept in " << folder << " ("
              << gigabytes(engine::keptWeightsCap()) << " at most)\n";
    for (const auto& k : kept) {
        char line[96];
        std::snprintf(line, sizeof line, "  %-5s %10s  used %s  ", k.format.c_str(),
                      gigabytes(k.bytes).c_str(), localTime(k.lastUsed).c_str());
        std::cout << line << (k.model.empty() ? k.identity : k.model) << "\n";
    }
    std::cout << kept.size() << " file" << (kept.size() == 1 ? "" : "s") << ", " << gigabytes(total)
              << "\n";
    return 0;
}

} // namespace baton::cli
