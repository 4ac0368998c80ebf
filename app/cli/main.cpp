// baton-cli: Baton's engine from the command line, for scripting and benchmarks.
#include "cli_support.h"
#include "commands.h"

#include <baton/app/paths.h>
#include <baton/engine/model.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstring>
#include <iostream>

namespace {

struct Command {
    const char* name;
    int (*run)(const std::vector<std::string>&);
    const char* summary;
};

const Command kCommands[] = {
    {"info", baton::cli::runInfo,
     "Show a model's configuration, size, weight format and tokenizer"},
    {"tokenize", baton::cli::runTokenize, "Print the token ids of a text"},
    {"score", baton::cli::runScore, "Per-token log-probabilities, NLL and perplexity of a text"},
    {"generate", baton::cli::runGenerate, "Continue a prompt, streaming the text"},
    {"eval", baton::cli::runEval, "Windowed evaluation: perplexity and FLOPs against T and o"},
    {"probe", baton::cli::runProbe,
     "Memory probe: does the model remember a fact from d windows back?"},
    {"story", baton::cli::runStory, "Stories: new, list, show, export, import, generate"},
    {"train", baton::cli::runTrain, "Fine-tune or pretrain a baseline or recurrent model"},
    {"serve", baton::cli::runServe,
     "HTTP server for KoboldAI and OpenAI clients (SillyTavern, KoboldAI Lite, ...)"},
    {"topics", baton::cli::runTopics, "LDA topics: fit, show, infer, and the topic experiment"},
    {"cache", baton::cli::runCache, "List or clear the converted weights kept on disk"},
#ifdef BATON_WITH_HUB
    {"pull", baton::cli::runPull, "Download a GPT-2 model from the Hugging Face Hub"},
#endif
};

void printUsage(std::ostream& out) {
    out << "Usage: baton-cli [--verbose] [--db PATH] COMMAND [options]\n\n"
           "Baton's engine from the command line. Commands:\n";
    for (const auto& c : kCommands) {
        std::string name = c.name;
        name.resize(12, ' ');
        out << "  " << name << c.summary << "\n";
    }
    out << "\nRun 'baton-cli COMMAND --help' for a command's options.\n";
}

} // namespace

int main(int argc, char** argv) {
    // Logs go to standard error: standard output carries the results.
    auto logger = spdlog::stderr_color_mt("baton");
    spdlog::set_default_logger(logger);
    spdlog::set_level(spdlog::level::warn);

    int i = 1;
    for (; i < argc && argv[i][0] == '-'; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            printUsage(std::cout);
            return 0;
        }
        if (a == "--version") {
            std::cout << "baton-cli " BATON_VERSION "\n";
            return 0;
        }
        if (a == "--verbose") {
            spdlog::set_level(spdlog::level::info);
            continue;
        }
        if (a == "--db" || a.rfind("--db=", 0) == 0) { // the story database (see 'story --help')
            if (a == "--db" && i + 1 >= argc) {
                std::cerr << "error: --db needs a value (PATH)\n";
                return 2;
            }
            baton::cli::setDatabasePath(a == "--db" ? argv[++i] : a.substr(5));
            continue;
        }
        std::cerr << "error: unknown option " << a << "\n";
        printUsage(std::cerr);
        return 2;
    }
    if (i >= argc) {
        printUsage(std::cerr);
        return 2;
    }
    baton::engine::rememberModelIdentitiesIn(baton::app::modelIdentityMemoFolder());
    baton::engine::keepConvertedWeightsIn(baton::app::convertedWeightsCacheFolder());
    const std::string name = argv[i];
    const std::vector<std::string> rest(argv + i + 1, argv + argc);
    for (const auto& c : kCommands) {
        if (name != c.name)
            continue;
        try {
            return c.run(rest);
        } catch (const baton::cli::UsageError& e) {
            std::cerr << "error: " << e.what() << "\n";
            return 2;
        } catch (const baton::cli::CliError& e) {
            std::cerr << "error: " << e.what() << "\n";
            return 1;
        } catch (const std::exception& e) {
            std::cerr << "error: " << e.what() << "\n";
            return 1;
        }
    }
    std::cerr << "error: unknown command '" << name << "'\n";
    printUsage(std::cerr);
    return 2;
}
