#include "baton/story/settings.h"

#include <baton/common/json.h>

#include <cmath>
#include <limits>

namespace baton::story {

const std::vector<Preset>& presets() {
    // Focused stays close to the likeliest words; Creative takes more risks.
    static const std::vector<Preset> list = {
        {"Focused", 0.5, 40, 0.90, 1.15},
        {"Balanced", 0.8, 0, 0.95, 1.10},
        {"Creative", 1.05, 0, 0.98, 1.05},
    };
    return list;
}

const char* memoryLayoutName(MemoryLayout layout) {
    return layout == MemoryLayout::Once ? "once" : "every_window";
}

StorySettings defaultSettings() {
    StorySettings s;
    const Preset& p = presets()[kBalancedPreset];
    s.sampling.temperature = p.temperature;
    s.sampling.topK = p.topK;
    s.sampling.topP = p.topP;
    s.sampling.repetitionPenalty = p.repetitionPenalty;
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
    r.number("temperature", 0, 10, s.sampling.temperature);
    r.integer("top_k", 0, 1 << 24, s.sampling.topK);
    r.number("top_p", 1e-6, 1, s.sampling.topP);
    r.number("repetition_penalty", 1, 10, s.sampling.repetitionPenalty);
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
    o["temperature"] = s.sampling.temperature;
    o["top_k"] = s.sampling.topK;
    o["top_p"] = s.sampling.topP;
    o["repetition_penalty"] = s.sampling.repetitionPenalty;
    o["max_tokens"] = s.sampling.maxTokens;
    if (s.fixedSeed)
        o["seed"] = s.sampling.seed;
    if (!s.sampling.stopStrings.empty())
        o["stop"] = s.sampling.stopStrings;
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
    return o.dump();
}

} // namespace baton::story
