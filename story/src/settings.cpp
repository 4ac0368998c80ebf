#include "baton/story/settings.h"

#include <algorithm>
#include <baton/common/json.h>
#include <baton/engine/sampler_settings.h>

#include <cmath>
#include <limits>

namespace baton::story {

const std::vector<Preset>& presets() {
    // Focused stays close to the likeliest words; Creative takes more risks. Min-p + DRY
    // is what writers of the creative-writing community moved to in 2024-25 for small
    // models that repeat themselves: the full temperature, min-p 0.1 instead of top-p,
    // and DRY instead of the repetition penalty (which also punishes the words a story
    // needs again: names, "the").
    static const std::vector<Preset> list = {
        {"Focused",
         {{"temperature", 0.5}, {"top_k", 40}, {"top_p", 0.90}, {"repetition_penalty", 1.15}}},
        {"Balanced", {{"temperature", 0.8}, {"top_p", 0.95}, {"repetition_penalty", 1.10}}},
        {"Creative", {{"temperature", 1.05}, {"top_p", 0.98}, {"repetition_penalty", 1.05}}},
        {"Min-p + DRY", {{"temperature", 1.0}, {"min_p", 0.1}, {"dry_multiplier", 0.8}}},
    };
    return list;
}

namespace {

double presetValue(const Preset& preset, const engine::SamplerSetting& setting) {
    for (const auto& [key, value] : preset.values)
        if (std::string_view(key) == setting.key)
            return value;
    return setting.defaultValue();
}

} // namespace

void applyPreset(const Preset& preset, engine::SamplingOptions& sampling) {
    for (const engine::SamplerSetting& setting : engine::samplerSettings())
        setting.set(sampling, presetValue(preset, setting));
}

bool matchesPreset(const Preset& preset, const engine::SamplingOptions& sampling) {
    for (const engine::SamplerSetting& setting : engine::samplerSettings())
        if (std::abs(setting.get(sampling) - presetValue(preset, setting)) > 1e-9)
            return false;
    return true;
}

const char* memoryLayoutName(MemoryLayout layout) {
    return layout == MemoryLayout::Once ? "once" : "every_window";
}

StorySettings defaultSettings() {
    StorySettings s;
    applyPreset(presets()[kBalancedPreset], s.sampling);
    s.sampling.maxTokens = 200;
    s.sampling.stopAtEndOfText = true;
    return s;
}

Result<StorySettings> parseSettings(std::string_view json) {
    if (json.find_first_not_of(" \t\r\n") == std::string_view::npos)
        json = "{}";
    const auto o = baton::json::parse(json, nullptr);
    if (!o || !o->is_object())
        return settingsError("the generation settings are not a JSON object");
    StorySettings s = defaultSettings();
    baton::json::FieldReader r(*o);
    // Every sampler setting by its key, in its range (engine/sampler_settings.h).
    for (const engine::SamplerSetting& setting : engine::samplerSettings()) {
        double v = setting.get(s.sampling);
        bool given = false;
        if (setting.integer) {
            int64_t whole = int64_t(v);
            given = r.integer(setting.key, int64_t(setting.lo), int64_t(setting.hi), whole);
            v = double(whole);
        } else {
            given = r.number(setting.key, setting.lo, setting.hi, v);
        }
        if (!given)
            continue;
        if (const std::string why = setting.check(v); !why.empty())
            return settingsError("the generation settings are invalid: " + why);
        setting.set(s.sampling, v);
    }
    r.strings("dry_sequence_breakers", s.sampling.drySequenceBreakers, /*nonEmpty=*/true);
    r.strings("sampler_order", s.sampling.samplerOrder, /*nonEmpty=*/true);
    r.strings("banned_phrases", s.sampling.bannedPhrases, /*nonEmpty=*/true);
    r.boolean("banned_inside_words", s.sampling.bannedInsideWords);
    // {"text": bias}: the texts whose tokens get a bias.
    if (const auto t = o->find("text_bias"); t != o->end() && !t->is_null()) {
        if (!t->is_object())
            return settingsError("the generation settings are invalid: text_bias must map "
                                 "texts to biases");
        for (const auto& [text, bias] : t->items()) {
            if (!bias.is_number())
                return settingsError("the generation settings are invalid: text_bias must map "
                                     "texts to biases");
            s.sampling.textBias.emplace_back(text, float(bias.get<double>()));
        }
    }
    {
        engine::SamplingOptions lists; // the order's names, the biased texts, the bans
        lists.samplerOrder = s.sampling.samplerOrder;
        lists.textBias = s.sampling.textBias;
        lists.bannedPhrases = s.sampling.bannedPhrases;
        if (auto v = engine::validateSampling(lists); !v)
            return settingsError("the generation settings are invalid: " + v.error().message);
    }
    r.integer("max_tokens", 0, 1000000, s.sampling.maxTokens);
    if (r.integer("seed", 0, std::numeric_limits<int64_t>::max(), s.sampling.seed))
        s.fixedSeed = true;
    r.strings("stop", s.sampling.stopStrings, /*nonEmpty=*/true);
    bool ignoreEos = false;
    if (r.boolean("ignore_eos", ignoreEos))
        s.sampling.stopAtEndOfText = !ignoreEos;
    r.integer("window", 1, 1 << 20, s.windows.window);
    r.integer("overlap", 0, 1 << 20, s.windows.overlap);
    std::string memory;
    if (r.string("memory", memory)) {
        if (memory == memoryLayoutName(MemoryLayout::Once))
            s.memory = MemoryLayout::Once;
        else if (memory != memoryLayoutName(MemoryLayout::EveryWindow))
            return settingsError("the generation settings are invalid: \"memory\" must be "
                                 "\"every_window\" or \"once\"");
    }
    r.integer("lore_budget", 1, 1 << 20, s.loreBudget);
    r.boolean("trim_sentences", s.trimSentences);
    r.boolean("recall", s.recall.enabled);
    r.integer("recall_budget", 1, 1 << 20, s.recall.budget);
    r.integer("recall_chunks", 1, kMaxRecallChunks, s.recall.chunks);
    if (o->contains("recall_banned")) {
        const auto& banned = (*o)["recall_banned"];
        bool ok = banned.is_array();
        for (size_t i = 0; ok && i < banned.size(); ++i) {
            const auto& pair = banned[i];
            ok = pair.is_array() && pair.size() == 2 && pair[0].is_number_integer() &&
                 pair[1].is_number_integer() && pair[0].get<int64_t>() > 0 &&
                 pair[1].get<int64_t>() >= 0;
            if (ok)
                s.recall.banned.emplace_back(pair[0].get<int64_t>(), pair[1].get<int64_t>());
        }
        if (!ok)
            return settingsError("the generation settings are invalid: \"recall_banned\" must "
                                 "be a list of [passage, start] pairs");
    }
    if (!r.error().empty())
        return settingsError("the generation settings are invalid: " + r.error());
    if (s.windows.window > 0 && s.windows.overlap >= s.windows.window)
        return settingsError("the generation settings are invalid: \"overlap\" must be less "
                             "than \"window\"");
    if (s.windows.window == 0 && s.windows.overlap != 0)
        return settingsError(
            "the generation settings are invalid: \"overlap\" needs \"window\" beside it");
    return s;
}

std::string settingsJson(const StorySettings& s) {
    nlohmann::ordered_json o;
    // The four every story has always stored, then the others where they are not off.
    o["temperature"] = s.sampling.temperature;
    o["top_k"] = s.sampling.topK;
    o["top_p"] = s.sampling.topP;
    o["repetition_penalty"] = s.sampling.repetitionPenalty;
    o["max_tokens"] = s.sampling.maxTokens;
    for (const engine::SamplerSetting& setting : engine::samplerSettings()) {
        if (o.contains(setting.key) || setting.get(s.sampling) == setting.defaultValue())
            continue;
        if (setting.integer)
            o[setting.key] = int64_t(setting.get(s.sampling));
        else
            o[setting.key] = setting.get(s.sampling);
    }
    if (s.sampling.drySequenceBreakers != engine::SamplingOptions{}.drySequenceBreakers)
        o["dry_sequence_breakers"] = s.sampling.drySequenceBreakers;
    if (!s.sampling.samplerOrder.empty())
        o["sampler_order"] = s.sampling.samplerOrder;
    if (!s.sampling.textBias.empty()) {
        auto sorted = s.sampling.textBias; // as parseSettings reads them back
        std::stable_sort(sorted.begin(), sorted.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        nlohmann::ordered_json biases = nlohmann::ordered_json::object();
        for (const auto& [text, bias] : sorted)
            biases[text] = double(bias);
        o["text_bias"] = biases;
    }
    if (s.fixedSeed)
        o["seed"] = s.sampling.seed;
    if (!s.sampling.stopStrings.empty())
        o["stop"] = s.sampling.stopStrings;
    if (!s.sampling.bannedPhrases.empty())
        o["banned_phrases"] = s.sampling.bannedPhrases;
    if (s.sampling.bannedInsideWords)
        o["banned_inside_words"] = true;
    if (!s.sampling.stopAtEndOfText)
        o["ignore_eos"] = true;
    if (s.windows.window > 0) {
        o["window"] = s.windows.window;
        o["overlap"] = s.windows.overlap;
    }
    if (s.memory == MemoryLayout::Once)
        o["memory"] = memoryLayoutName(s.memory);
    if (s.loreBudget > 0)
        o["lore_budget"] = s.loreBudget;
    if (s.trimSentences)
        o["trim_sentences"] = true;
    if (!s.recall.enabled)
        o["recall"] = false;
    if (s.recall.budget > 0)
        o["recall_budget"] = s.recall.budget;
    if (s.recall.chunks != RecallSettings{}.chunks)
        o["recall_chunks"] = s.recall.chunks;
    if (!s.recall.banned.empty()) {
        auto banned = nlohmann::ordered_json::array();
        for (const auto& [passage, start] : s.recall.banned)
            banned.push_back({passage, start});
        o["recall_banned"] = banned;
    }
    return o.dump();
}

} // namespace baton::story
