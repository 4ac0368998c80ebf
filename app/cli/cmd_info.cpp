#include "cli_support.h"
#include "commands.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <iostream>
#include <string>

namespace baton::cli {

namespace {

// What LibTorch's OpenMP waits with in this process (OMP_WAIT_POLICY, read when the
// library loads). The batched work sizes its team by the free cores, so spinning
// workers (the default) no longer collapse under load; PASSIVE only costs speed on an
// idle machine (docs/performance.md).
std::string waitPolicy() {
    const char* v = std::getenv("OMP_WAIT_POLICY");
    return v ? v : "libgomp default";
}

nlohmann::ordered_json toJson(const engine::RecurrenceConfig& r) {
    return {{"window", r.window},      {"overlap", r.overlap},
            {"slots", r.slots},        {"insert_block", r.insertBlock},
            {"ffn_width", r.ffnWidth}, {"ffn_depth", r.ffnDepth},
            {"residual", r.residual},  {"slot_bias", r.slotBias},
            {"pool_last", r.poolLast}, {"sink", r.sink}};
}

} // namespace

int runInfo(const std::vector<std::string>& argv) {
    Args args(
        "info",
        "Show a model's configuration, size, weight format, tokenizer and recurrence module.");
    addModelOptions(args);
    args.flag("json", "Print one JSON object");
    if (!args.parse(argv))
        return 0;
    const auto model = loadModel(args);
    const auto& i = model->info();
    const auto& c = i.config;
    if (args.has("json")) {
        nlohmann::ordered_json j;
        j["path"] = i.path;
        j["identity"] = i.identity;
        j["n_layer"] = c.nLayer;
        j["n_head"] = c.nHead;
        j["n_embd"] = c.nEmbd;
        j["n_inner"] = c.nInner;
        j["n_positions"] = c.nPositions;
        j["vocab_size"] = c.vocabSize;
        j["layer_norm_epsilon"] = c.layerNormEps;
        j["parameters"] = i.parameterCount;
        j["storage_dtype"] = i.storageDtype;
        j["weights"] = engine::weightFormatName(i.weights);
        j["mapped_bytes"] = i.mappedBytes;
        j["kept_bytes"] = i.keptBytes;
        j["device"] = i.device;
        j["tokenizer"] = i.tokenizerKind;
        j["tokenizer_vocab_size"] = i.tokenizerVocabSize;
        j["recurrence"] = i.recurrence ? toJson(*i.recurrence) : nlohmann::ordered_json();
        j["runtime"] = engine::runtimeVersions();
        j["openmp_wait_policy"] = waitPolicy();
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    std::cout << "model        " << i.path << "\n"
              << "identity     " << i.identity << "\n"
              << "architecture GPT-2: " << c.nLayer << " layers, " << c.nHead << " heads, "
              << c.nEmbd << " wide (MLP " << c.nInner << "), " << c.nPositions
              << " positions, vocabulary " << c.vocabSize << "\n"
              << "parameters   " << i.parameterCount << " (" << (i.parameterCount / 1e6) << " M)\n"
              << "weights      stored " << i.storageDtype << ", held "
              << engine::weightFormatName(i.weights) << " on " << i.device
              << (i.mappedBytes > 0 ? ", " + std::to_string(i.mappedBytes / 1000000) +
                                          " MB of them the file's mapped pages (no copy)"
                                    : std::string())
              << (i.keptBytes > 0 ? ", " + std::to_string(i.keptBytes / 1000000) +
                                        " MB mapped from the converted weights kept on disk"
                                  : std::string())
              << "\n"
              << "tokenizer    " << i.tokenizerKind << ", " << i.tokenizerVocabSize << " tokens\n"
              << "recurrence   "
              << (i.recurrence ? engine::describeRecurrence(*i.recurrence)
                               : std::string("none (a baseline model)"))
              << "\n"
              << "runtime      " << engine::runtimeVersions() << "; OpenMP wait policy "
              << waitPolicy() << "\n";
    return 0;
}

} // namespace baton::cli
