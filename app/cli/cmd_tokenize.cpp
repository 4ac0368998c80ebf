#include "cli_support.h"
#include "commands.h"

#include <baton/engine/tokenizer.h>

#include <nlohmann/json.hpp>

#include <iostream>

namespace baton::cli {

int runTokenize(const std::vector<std::string>& argv) {
    Args args("tokenize", "Print the token ids of a text file with a model's tokenizer.");
    args.option("model", "DIR", "Model folder (only its tokenizer files are read)")
        .flag("json", "Print {\"ids\": [...]}")
        .flag("pieces", "Print one token per line: id, then its text (escaped)")
        .positionals("FILE", "UTF-8 text file to tokenize ('-' reads standard input)", 1, 1);
    if (!args.parse(argv))
        return 0;
    auto tok = engine::loadTokenizer(modelFolder(args));
    check(tok);
    const auto ids = (*tok)->encode(readText(args.positional()[0]));
    if (args.has("json")) {
        nlohmann::json j;
        j["ids"] = ids;
        std::cout << j.dump() << "\n";
    } else if (args.has("pieces")) {
        for (int32_t id : ids)
            std::cout << id << "\t" << escapeTsv((*tok)->tokenBytes(id)) << "\n";
    } else {
        for (size_t i = 0; i < ids.size(); ++i)
            std::cout << (i ? " " : "") << ids[i];
        std::cout << "\n";
    }
    return 0;
}

} // namespace baton::cli
