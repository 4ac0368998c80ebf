// Tiny GPT-2 checkpoints built by tests: random weights in Hugging Face layout.
#pragma once

#include "model/baton_json.h"
#include "model/hf_config.h"
#include "model/recurrence.h"
#include "model/safetensors.h"
#include "util/files.h"

#include "test_support.h"

#include <baton/engine/model.h>
#include <baton/engine/tokenizer.h>

#include <random>
#include <string>
#include <vector>

namespace baton::test {

// Writes config.json and model.safetensors (F32) for `config` into `folder`, with
// N(0, std) weights, unit layer-norm gains and zero biases. No tokenizer files.
inline bool writeTinyGpt2(const std::string& folder, const engine::ModelConfig& config,
                          uint32_t seed = 1, float std = 0.05f) {
    using namespace engine;
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.f, std);
    const int64_t k = config.nEmbd, inner = config.nInner;
    struct T {
        std::string name;
        std::vector<int64_t> shape;
        int kind; // 0 random, 1 ones, 2 zeros
    };
    std::vector<T> spec = {{"wte.weight", {config.vocabSize, k}, 0},
                           {"wpe.weight", {config.nPositions, k}, 0}};
    for (int l = 0; l < config.nLayer; ++l) {
        const std::string p = "h." + std::to_string(l) + ".";
        spec.push_back({p + "ln_1.weight", {k}, 1});
        spec.push_back({p + "ln_1.bias", {k}, 2});
        spec.push_back({p + "attn.c_attn.weight", {k, 3 * k}, 0});
        spec.push_back({p + "attn.c_attn.bias", {3 * k}, 2});
        spec.push_back({p + "attn.c_proj.weight", {k, k}, 0});
        spec.push_back({p + "attn.c_proj.bias", {k}, 2});
        spec.push_back({p + "ln_2.weight", {k}, 1});
        spec.push_back({p + "ln_2.bias", {k}, 2});
        spec.push_back({p + "mlp.c_fc.weight", {k, inner}, 0});
        spec.push_back({p + "mlp.c_fc.bias", {inner}, 2});
        spec.push_back({p + "mlp.c_proj.weight", {inner, k}, 0});
        spec.push_back({p + "mlp.c_proj.bias", {k}, 2});
    }
    spec.push_back({"ln_f.weight", {k}, 1});
    spec.push_back({"ln_f.bias", {k}, 2});
    std::vector<std::vector<float>> data;
    std::vector<StWriteTensor> tensors;
    for (const auto& t : spec) {
        int64_t n = 1;
        for (auto d : t.shape)
            n *= d;
        std::vector<float> v(static_cast<size_t>(n));
        for (auto& x : v)
            x = t.kind == 0 ? normal(rng) : (t.kind == 1 ? 1.f : 0.f);
        data.push_back(std::move(v));
    }
    for (size_t i = 0; i < spec.size(); ++i)
        tensors.push_back({spec[i].name, StDtype::F32, spec[i].shape, data[i].data(),
                           data[i].size() * sizeof(float)});
    if (!writeSafetensors(files::join(folder, "model.safetensors"), tensors).ok())
        return false;
    return files::writeAtomically(files::join(folder, "config.json"), hfConfigJson(config)).ok();
}

// Makes `folder` (a GPT-2 folder with its tokenizer) a recurrent checkpoint:
// recurrence.safetensors with N(0, std) FFN weights (so the state is far from a
// no-op), alpha ~ N(0, 1), and baton.json naming the folder's tokenizer.
inline bool writeRecurrence(const std::string& folder, const engine::ModelConfig& model,
                            const engine::RecurrenceConfig& rec,
                            const std::string& tokenizerIdentity, uint32_t seed = 2,
                            float std = 0.2f) {
    using namespace engine;
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.f, 1.f);
    const auto spec = expectedRecurrenceTensors(model, rec);
    std::vector<std::vector<float>> data;
    std::vector<StWriteTensor> tensors;
    for (const auto& [name, shape] : spec) {
        int64_t n = 1;
        for (auto d : shape)
            n *= d;
        std::vector<float> v(static_cast<size_t>(n));
        const float scale =
            name == "alpha" ? 1.f : ((name == "slot_bias" || name == "sink") ? 0.5f : std);
        for (auto& x : v)
            x = scale * normal(rng);
        data.push_back(std::move(v));
    }
    for (size_t i = 0; i < spec.size(); ++i)
        tensors.push_back({spec[i].first, StDtype::F32, spec[i].second, data[i].data(),
                           data[i].size() * sizeof(float)});
    if (!writeSafetensors(files::join(folder, "recurrence.safetensors"), tensors).ok())
        return false;
    return files::writeAtomically(files::join(folder, "baton.json"),
                                  batonJsonText(rec, tokenizerIdentity))
        .ok();
}

// A copy of the shared fixture (GPT-2 tokenizer, random weights) in `dir`, made a
// recurrent checkpoint with `rec` and a random module (see writeRecurrence). False
// when the fixture is missing or a file cannot be written.
inline bool writeRecurrentFixture(const QString& dir, const engine::RecurrenceConfig& rec,
                                  uint32_t seed = 2) {
    if (!copyFolder(fixtureDir(), dir))
        return false;
    auto tokenizer = engine::loadTokenizer(dir.toStdString());
    auto config = engine::readHfConfig(engine::files::join(dir.toStdString(), "config.json"));
    if (!tokenizer || !config)
        return false;
    return writeRecurrence(dir.toStdString(), *config, rec, (*tokenizer)->identity(), seed);
}

// The recurrent fixture the story and server suites continue text with (T 16, o 4),
// written into `dir` and loaded; null when either fails.
inline std::shared_ptr<engine::Model> loadRecurrentFixture(const QString& dir) {
    engine::RecurrenceConfig rec;
    rec.window = 16;
    rec.overlap = 4;
    if (!writeRecurrentFixture(dir, rec))
        return nullptr;
    auto model = engine::Model::load(dir.toStdString());
    return model ? *model : nullptr;
}

} // namespace baton::test
