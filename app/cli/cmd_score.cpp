#include "cli_support.h"
#include "commands.h"
#include "terminal_progress.h"

#include <baton/engine/scoring.h>
#include <baton/engine/text.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace baton::cli {

int runScore(const std::vector<std::string>& argv) {
    Args args("score",
              "Score a text: the log-probability (nats) of every predicted token, the total "
              "negative log-likelihood and the token- and word-level perplexity. Text longer "
              "than the window is scored in consecutive windows.");
    addModelOptions(args);
    args.option("window", "T", "Window size in tokens (default: the model's positions)", "0")
        .flag("json", "Print one JSON object with every token's score")
        .flag("summary", "Print only the totals")
        .positionals("FILE", "UTF-8 text file ('-' reads standard input)", 1, 1);
    if (!args.parse(argv))
        return 0;
    const std::string text = readText(args.positional()[0]);
    const auto model = loadModel(args);
    engine::ScoreOptions options;
    options.windows.window = static_cast<int>(args.getInt("window", 0, 1 << 20));
    TerminalProgress bar("score", double(model->tokenizer()->encode(text).size()), "tokens");
    options.progress = [&](int64_t done, int64_t total) {
        bar.update(total > 0 ? double(done) / double(total) : 1.0);
        return true;
    };
    const auto r = engine::scoreText(*model, text, options);
    bar.finish();
    check(r);
    const auto tok = model->tokenizer();
    if (args.has("json")) {
        nlohmann::ordered_json j;
        j["tokens"] = r->tokens;
        j["scored_tokens"] = r->scoredTokens;
        j["words"] = r->words;
        j["window"] = r->windows.window;
        j["nll_sum"] = r->nllSum;
        j["token_ppl"] = r->tokenPerplexity;
        j["word_ppl"] = r->wordPerplexity;
        j["seconds"] = r->seconds;
        auto& list = j["per_token"] = nlohmann::ordered_json::array();
        for (const auto& s : r->perToken)
            list.push_back({{"index", s.index},
                            {"id", s.id},
                            {"text", engine::sanitizeUtf8(tok->tokenBytes(s.id))},
                            {"logprob", s.logprob}});
        std::cout << j.dump() << "\n";
        return 0;
    }
    if (!args.has("summary")) {
        std::cout << "index\tid\tlogprob\ttoken\n";
        for (const auto& s : r->perToken) {
            char lp[32];
            std::snprintf(lp, sizeof(lp), "%.6f", s.logprob);
            std::cout << s.index << "\t" << s.id << "\t" << lp << "\t"
                      << escapeTsv(tok->tokenBytes(s.id)) << "\n";
        }
    }
    char line[256];
    std::snprintf(line, sizeof(line),
                  "tokens %lld, scored %lld, words %lld, window %d\n"
                  "NLL %.4f nats, token perplexity %.4f, word perplexity %.4f (%.2f s)\n",
                  static_cast<long long>(r->tokens), static_cast<long long>(r->scoredTokens),
                  static_cast<long long>(r->words), r->windows.window, r->nllSum,
                  r->tokenPerplexity, r->wordPerplexity, r->seconds);
    std::cout << line;
    return 0;
}

} // namespace baton::cli
