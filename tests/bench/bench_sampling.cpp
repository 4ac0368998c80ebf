// The sampler's cost per token over a vocabulary's logits (baton-mini's own, as it
// continues a prompt, and, the worst case, flat random ones over GPT-2's 50,257), for the
// classic
// settings (temperature, top-p, repetition penalty: the path a seed has always taken)
// and the samplers added beside them (min-p; min-p with DRY over a 1,024-token window;
// everything at once), beside a bound measured in the same run, interleaved: one pass
// over the logits (copying them, as every sample does). Medians of rounds.
//
//   bench_sampling [--model DIR] [--tokens 2000] [--rounds 5]
#include "bench_util.h"

#include <baton/engine/generator.h>
#include <baton/engine/model.h>
#include <baton/engine/sampling.h>

#include <spdlog/spdlog.h>

#include <cmath>
#include <iostream>
#include <random>

using namespace baton;

namespace {

struct Config {
    const char* name;
    engine::SamplingOptions options;
};

} // namespace

int main(int argc, char** argv) {
    const int tokens = std::stoi(bench::arg(argc, argv, "tokens", "2000"));
    const int rounds = std::stoi(bench::arg(argc, argv, "rounds", "5"));
    const std::string modelDir =
        bench::arg(argc, argv, "model", BATON_SOURCE_DIR "/resources/models/baton-mini");
    constexpr size_t kVocab = 50257;
    std::mt19937 rng(1);
    // The model's logits at 16 steps of a continuation; then flat random ones.
    spdlog::set_level(spdlog::level::warn); // stdout carries only the JSON lines
    engine::initializeRuntime();
    auto model = engine::Model::load(modelDir);
    if (!model) {
        std::cerr << "error: " << model.error().message << "\n";
        return 1;
    }
    auto gen = engine::Generator::create(*model);
    if (!gen || !(*gen)->appendPrompt("It is a truth universally acknowledged"))
        return 1;
    std::vector<std::vector<float>> real;
    engine::SamplingOptions greedy;
    greedy.temperature = 0;
    greedy.maxTokens = 16;
    auto generated = (*gen)->generate(greedy, [&](const engine::GenerationEvent&) {
        real.push_back((*gen)->nextLogits());
        return true;
    });
    if (!generated || real.empty()) {
        std::cerr << "error: the model generated nothing\n";
        return 1;
    }
    std::normal_distribution<float> normal(0.f, 3.f);
    std::vector<std::vector<float>> flat(16, std::vector<float>(kVocab));
    for (auto& l : flat)
        for (float& x : l)
            x = normal(rng);
    std::vector<int32_t> window(1024);
    std::uniform_int_distribution<int32_t> token(0, 2000); // a story's common words
    for (auto& t : window)
        t = token(rng);

    std::vector<Config> configs(4);
    configs[0].name = "classic";
    configs[0].options.temperature = 0.8;
    configs[0].options.topP = 0.95;
    configs[0].options.repetitionPenalty = 1.1;
    configs[1] = {"min_p", {}};
    configs[1].options.temperature = 1.0;
    configs[1].options.minP = 0.1;
    configs[2] = configs[1];
    configs[2].name = "min_p_dry";
    configs[2].options.dryMultiplier = 0.8;
    configs[3] = configs[2];
    configs[3].name = "all";
    configs[3].options.typicalP = 0.95;
    configs[3].options.tailFree = 0.95;
    configs[3].options.topA = 0.1;
    configs[3].options.topNSigma = 3;
    configs[3].options.xtcProbability = 0.5;
    configs[3].options.dynatempRange = 0.3;
    configs[3].options.presencePenalty = 0.2;
    configs[3].options.frequencyPenalty = 0.2;

    for (const auto& [source, logits] :
         {std::pair<const char*, const std::vector<std::vector<float>>&>{"baton_mini", real},
          {"flat_random", flat}}) {
        std::vector<std::vector<double>> perToken(configs.size()), bound(configs.size());
        int32_t sink = 0;
        for (int round = 0; round < rounds; ++round)
            for (size_t c = 0; c < configs.size(); ++c) {
                // The bound, just before: a copy of the logits per token.
                auto t0 = bench::Clock::now();
                for (int i = 0; i < tokens; ++i) {
                    std::vector<float> l = logits[size_t(i) % logits.size()];
                    sink += int32_t(l[size_t(i) % kVocab] > 0);
                }
                bound[c].push_back(bench::secondsSince(t0) / tokens * 1e6);
                engine::Sampler s(configs[c].options, {11, 25, 198});
                t0 = bench::Clock::now();
                for (int i = 0; i < tokens; ++i) {
                    std::vector<float> l = logits[size_t(i) % logits.size()];
                    sink += s.sample(l, window);
                }
                perToken[c].push_back(bench::secondsSince(t0) / tokens * 1e6);
            }
        for (size_t c = 0; c < configs.size(); ++c) {
            const std::string fields =
                "\"config\": \"" + std::string(configs[c].name) + "\", \"logits\": \"" + source +
                "\", \"vocab\": " + std::to_string(logits.front().size()) + ", \"window\": 1024";
            const double us = bench::median(perToken[c]), floor = bench::median(bound[c]);
            bench::report("sampling", "microseconds_per_token", us, "us", fields);
            bench::report("sampling", "logits_copy_bound", floor, "us", fields);
            bench::report("sampling", "over_bound", us / floor, "ratio", fields);
        }
        if (sink == 42) // keeps the loops from being optimised away
            std::cerr << "";
    }
    return 0;
}
