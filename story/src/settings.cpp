#include "baton/story/settings.h"

#include <nlohmann/json.hpp>

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

namespace {

using Json = nlohmann::json;

// Reads o[key] into `out` when present; an error naming the key when its type or range
// is wrong.
class Reader {
public:
    explicit Reader(const Json& o)
        : m_o(o) {}

    bool number(const char* key, double lo, double hi, double& out) {
        const auto it = m_o.find(key);
        if (it == m_o.end() || !m_error.empty())
            return false;
        if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < lo ||
            it->get<double>() > hi)
            return fail(key, "a number in [" + show(lo) + ", " + show(hi) + "]");
        out = it->get<double>();
        return true;
    }
    bool integer(const char* key, int64_t lo, int64_t hi, int64_t& out) {
        const auto it = m_o.find(key);
        if (it == m_o.end() || !m_error.empty())
            return false;
        if (!it->is_number_integer() || it->get<int64_t>() < lo || it->get<int64_t>() > hi)
            return fail(key,
                        "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
        out = it->get<int64_t>();
        return true;
    }
    bool boolean(const char* key, bool& out) {
        const auto it = m_o.find(key);
        if (it == m_o.end() || !m_error.empty())
            return false;
        if (!it->is_boolean())
            return fail(key, "true or false");
        out = it->get<bool>();
        return true;
    }
    bool strings(const char* key, std::vector<std::string>& out) {
        const auto it = m_o.find(key);
        if (it == m_o.end() || !m_error.empty())
            return false;
        if (!it->is_array())
            return fail(key, "an array of non-empty strings");
        std::vector<std::string> v;
        for (const auto& e : *it) {
            if (!e.is_string() || e.get<std::string>().empty())
                return fail(key, "an array of non-empty strings");
            v.push_back(e.get<std::string>());
        }
        out = std::move(v);
        return true;
    }
    const std::string& error() const { return m_error; }

private:
    static std::string show(double v) {
        std::string s = std::to_string(v);
        while (s.size() > 1 && s.back() == '0')
            s.pop_back();
        if (!s.empty() && s.back() == '.')
            s.pop_back();
        return s;
    }
    bool fail(const char* key, const std::string& what) {
        m_error = std::string("\"") + key + "\" must be " + what;
        return false;
    }
    const Json& m_o;
    std::string m_error;
};

} // namespace

Result<StorySettings> parseSettings(std::string_view json) {
    if (json.find_first_not_of(" \t\r\n") == std::string_view::npos)
        json = "{}";
    const Json o = Json::parse(json.begin(), json.end(), nullptr, false);
    if (o.is_discarded() || !o.is_object())
        return settingsError("the generation settings are not a JSON object");
    StorySettings s = defaultSettings();
    Reader r(o);
    r.number("temperature", 0, 10, s.sampling.temperature);
    int64_t v = 0;
    if (r.integer("top_k", 0, 1 << 24, v))
        s.sampling.topK = int(v);
    r.number("top_p", 1e-6, 1, s.sampling.topP);
    r.number("repetition_penalty", 1, 10, s.sampling.repetitionPenalty);
    if (r.integer("max_tokens", 0, 1000000, v))
        s.sampling.maxTokens = int(v);
    if (r.integer("seed", 0, std::numeric_limits<int64_t>::max(), v)) {
        s.sampling.seed = uint64_t(v);
        s.fixedSeed = true;
    }
    r.strings("stop", s.sampling.stopStrings);
    bool ignoreEos = false;
    if (r.boolean("ignore_eos", ignoreEos))
        s.sampling.stopAtEndOfText = !ignoreEos;
    if (r.integer("window", 1, 1 << 20, v))
        s.windows.window = int(v);
    if (r.integer("overlap", 0, 1 << 20, v))
        s.windows.overlap = int(v);
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
    return o.dump();
}

} // namespace baton::story
