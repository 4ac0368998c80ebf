// baton-cli pull: a GPT-2 model from the Hugging Face Hub (hub/include/baton/hub/hub.h),
// into the user's models folder, resumable, every file checked.
#include "cli_support.h"
#include "commands.h"
#include "terminal_progress.h"

#include <baton/app/paths.h>
#include <baton/engine/model.h>
#include <baton/hub/hub.h>

#include <nlohmann/json.hpp>

#include <csignal>
#include <cstdio>
#include <iostream>

namespace baton::cli {

namespace {

// SIGINT / SIGTERM stop the download; what is there stays for the next pull.
engine::CancelToken* g_cancel = nullptr;
void onSignal(int) {
    if (g_cancel)
        g_cancel->cancel();
}

std::string megabytes(double bytes) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.1f MB", bytes / 1e6);
    return buf;
}

} // namespace

int runPull(const std::vector<std::string>& argv) {
    Args args("pull",
              "Download a GPT-2 model from the Hugging Face Hub, e.g. openai-community/gpt2 "
              "(124 M parameters, 0.5 GB), openai-community/gpt2-medium (355 M, 1.5 GB), "
              "openai-community/gpt2-large (774 M, 3.2 GB), openai-community/gpt2-xl (1.6 B, "
              "6.4 GB) or distilbert/distilgpt2 (82 M, 0.35 GB). Only safetensors weights are "
              "fetched, never pickled ones. Every file is checked against the hub's checksum; "
              "an interrupted download resumes where it stopped when pulled again. HF_ENDPOINT "
              "picks a mirror, HF_TOKEN gives access to gated or private repositories, and "
              "https_proxy / no_proxy are honoured. Prints the model folder.");
    args.positionals("REPO[@REVISION]", "The repository id, with a branch, tag or commit", 1, 1);
    args.option("dest", "DIR",
                "The folder the model folder goes in (default: $XDG_DATA_HOME/baton/models, or "
                "~/.local/share/baton/models)",
                "")
        .flag("json", "Print the result as JSON");
    if (!args.parse(argv))
        return 0;
    auto ref = hub::parseRepoRef(args.positional()[0]);
    if (!ref)
        throw UsageError(ref.error().message);
    std::string dest = args.get("dest");
    if (dest.empty()) {
        dest = app::defaultModelsFolder();
        if (dest.empty())
            throw CliError("cannot find the data folder: set HOME or XDG_DATA_HOME, or give "
                           "--dest DIR");
    }
    const hub::HubOptions options = hub::optionsFromEnvironment("baton/" BATON_VERSION);

    engine::CancelToken cancel;
    g_cancel = &cancel;
    auto previousInt = std::signal(SIGINT, onSignal);
    auto previousTerm = std::signal(SIGTERM, onSignal);
    TerminalProgress bar("pull");
    auto result = hub::pull(
        options, *ref, dest,
        [&](const hub::PullProgress& p) {
            std::string message = p.file + "  " + megabytes(double(p.done)) + " of " +
                                  megabytes(double(p.total)) + "  " + megabytes(p.bytesPerSecond) +
                                  "/s";
            bar.update(p.total > 0 ? double(p.done) / double(p.total) : 0, message);
        },
        cancel);
    bar.finish();
    std::signal(SIGINT, previousInt);
    std::signal(SIGTERM, previousTerm);
    g_cancel = nullptr;
    if (!result) {
        const hub::HubError& e = result.error();
        if (e.code == hub::HubErrorCode::Cancelled)
            throw CliError("stopped; pull again to resume the download");
        throw CliError(e.message + " [" + hub::hubErrorCodeName(e.code) + "]");
    }
    const engine::ModelFolderSummary summary = engine::probeModelFolder(result->folder);
    if (args.has("json")) {
        nlohmann::ordered_json j = {{"folder", result->folder},
                                    {"repo", ref->repo},
                                    {"revision", ref->revision},
                                    {"commit", result->commit},
                                    {"bytes", result->bytes},
                                    {"downloaded", result->downloaded},
                                    {"already_there", result->alreadyThere},
                                    {"loadable", summary.present}};
        if (!summary.present)
            j["problem"] = summary.error;
        std::cout << j.dump() << "\n";
    } else {
        std::cout << result->folder << "\n";
        std::cerr << (result->alreadyThere ? "[already there: " : "[downloaded ")
                  << megabytes(double(result->alreadyThere ? result->bytes : result->downloaded))
                  << (result->alreadyThere
                          ? ""
                          : " (" + megabytes(double(result->bytes)) + " in the folder)")
                  << (result->alreadyThere ? "" : ", every file checked") << "; commit "
                  << result->commit << "]\n";
        if (summary.present)
            std::cerr << "[" << summary.config.nLayer << " layers, width " << summary.config.nEmbd
                      << ", " << summary.config.nPositions << " positions: use it with --model "
                      << result->folder << ", or in the app with File > Open model…]\n";
        else
            std::cerr << "[Baton cannot load this folder: " << summary.error << "]\n";
    }
    return 0;
}

} // namespace baton::cli
