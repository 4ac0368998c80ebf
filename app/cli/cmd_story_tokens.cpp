// baton-cli story tokens: the token alternatives recorded with the generated passages
// of a story's current path (story/token_choices.h), which `story generate --branch`
// picks from.
#include "cli_support.h"
#include "database_options.h"
#include "story_subcommands.h"

#include <baton/storage/story_store.h>
#include <baton/story/token_choices.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>

namespace baton::cli {

namespace {

// A token's text as one line shows it: quoted, with line breaks and tabs escaped.
std::string quoted(const std::string& text) {
    std::string s = "\"";
    for (char c : text)
        s += c == '\n' ? std::string("\\n") : c == '\t' ? std::string("\\t") : std::string(1, c);
    return s + "\"";
}

std::string percent(float logprob) {
    if (std::isnan(logprob))
        return "?";
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.2f%%", 100.0 * std::exp(double(logprob)));
    return buf;
}

} // namespace

int storyTokens(const std::vector<std::string>& argv) {
    Args args("story tokens",
              "List the token alternatives recorded when the story's text was generated: for "
              "every token of the generated passages on the current path (or of one passage), "
              "its probability under the model and the likeliest alternatives with theirs. "
              "'story generate ID --branch PASSAGE:TOKEN:ALTERNATIVE' branches there with one "
              "of them. Text edited since it was generated has none from the edit on.");
    args.positionals("ID", "The story's id", 1, 1);
    args.option("passage", "P", "Only this passage of the story (any branch)", "0")
        .flag("json", "Print JSON");
    addDbOption(args);
    if (!args.parse(argv))
        return 0;
    const int64_t id = positiveId(args, "ID (a story id)");
    const int64_t only = args.getInt("passage", 0, int64_t(1) << 62);
    auto db = openDatabase(args);
    std::vector<storage::Passage> passages;
    if (only != 0) {
        auto p = db->stories().passage(only);
        checkStorage(p);
        if (p->storyId != id)
            throw UsageError("passage " + std::to_string(only) + " is not in story " +
                             std::to_string(id));
        passages.push_back(*p);
    } else {
        auto path = db->stories().currentPath(id);
        checkStorage(path);
        passages = *path;
    }
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const storage::Passage& p : passages) {
        auto choices = story::passageChoices(*db, p.id);
        if (!choices)
            throwStoryError(choices.error());
        if (choices->empty())
            continue;
        nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
        if (!args.has("json"))
            std::printf("passage %lld\n", static_cast<long long>(p.id));
        for (size_t i = 0; i < choices->size(); ++i) {
            const story::TokenChoice& c = (*choices)[i];
            nlohmann::ordered_json alternatives = nlohmann::ordered_json::array();
            std::string line;
            for (size_t j = 0; j < c.alternatives.size(); ++j) {
                const story::Alternative& a = c.alternatives[j];
                alternatives.push_back({{"text", a.text}, {"logprob", a.logprob}});
                line += (j ? ", " : "") + std::to_string(j) + " " + quoted(a.text) + " " +
                        percent(a.logprob);
            }
            tokens.push_back(
                {{"index", i},
                 {"text", c.text},
                 {"logprob", std::isnan(c.logprob) ? nlohmann::ordered_json(nullptr)
                                                   : nlohmann::ordered_json(c.logprob)},
                 {"alternatives", alternatives}});
            if (!args.has("json"))
                std::printf("  %3zu %-16s %7s   %s\n", i, quoted(c.text).c_str(),
                            percent(c.logprob).c_str(), line.c_str());
        }
        out.push_back({{"passage", p.id}, {"tokens", tokens}});
    }
    if (args.has("json"))
        std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    else if (out.empty())
        std::printf("no token alternatives are recorded on this path\n");
    return 0;
}

} // namespace baton::cli
