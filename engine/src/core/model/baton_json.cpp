#include "model/baton_json.h"

#include "util/utf8.h"

#include <nlohmann/json.hpp>

namespace baton::engine {

Result<BatonJson> parseBatonJson(std::string_view text, const std::string& path,
                                 const ModelConfig& model) {
    if (const size_t bad = utf8::firstInvalid(text); bad != std::string_view::npos)
        return makeError(ErrorCode::InvalidUtf8,
                         path + " is not valid UTF-8 (byte " + std::to_string(bad) + ")");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        return makeError(ErrorCode::InvalidJson, path + " is not valid JSON: " + e.what());
    }
    auto bad = [&](const std::string& what) {
        return makeError(ErrorCode::BadConfig, path + ": " + what);
    };
    if (!j.is_object() || j.value("format", "") != "baton-recurrent")
        return bad("not a Baton recurrent checkpoint description (\"format\" must be "
                   "\"baton-recurrent\")");
    if (!j.contains("format_version") || !j["format_version"].is_number_integer())
        return bad("format_version is missing");
    const int version = j["format_version"].get<int>();
    if (version > kRecurrentFormatVersion)
        return makeError(ErrorCode::Unsupported,
                         path + " was written by a newer Baton (format version " +
                             std::to_string(version) + "; this build reads up to " +
                             std::to_string(kRecurrentFormatVersion) + ")");
    if (version < 1)
        return bad("format_version must be at least 1");

    BatonJson out;
    RecurrenceConfig& r = out.recurrence;
    auto integer = [&](const char* key, int lo, int hi, int& value) -> Result<void> {
        if (!j.contains(key) || !j[key].is_number_integer())
            return bad(std::string(key) + " is missing or not an integer");
        const int64_t v = j[key].get<int64_t>();
        if (v < lo || v > hi)
            return bad(std::string(key) + " = " + std::to_string(v) + " is outside [" +
                       std::to_string(lo) + ", " + std::to_string(hi) + "]");
        value = static_cast<int>(v);
        return {};
    };
    auto boolean = [&](const char* key, bool fallback, bool& value) -> Result<void> {
        if (!j.contains(key)) {
            value = fallback;
            return {};
        }
        if (!j[key].is_boolean())
            return bad(std::string(key) + " must be true or false");
        value = j[key].get<bool>();
        return {};
    };
    for (auto res :
         {integer("window", 1, model.nPositions, r.window),
          integer("insert_block", 0, model.nLayer - 1, r.insertBlock),
          integer("ffn_width", 1, 65536, r.ffnWidth), integer("ffn_depth", 0, 64, r.ffnDepth),
          boolean("residual", false, r.residual), boolean("slot_bias", false, r.slotBias),
          boolean("sink", false, r.sink)})
        if (!res)
            return res.error();
    r.slots = 1;
    r.poolLast = 0;
    if (j.contains("slots"))
        if (auto res = integer("slots", 1, 64, r.slots); !res)
            return res.error();
    if (j.contains("pool_last"))
        if (auto res = integer("pool_last", 0, model.nPositions, r.poolLast); !res)
            return res.error();
    if (r.poolLast > 0 && r.poolLast < r.slots)
        return bad("pool_last = " + std::to_string(r.poolLast) +
                   " is less than slots = " + std::to_string(r.slots));
    if (auto res = integer("overlap", 0, r.window - 1, r.overlap); !res)
        return res.error();
    if (!j.contains("tokenizer") || !j["tokenizer"].is_string())
        return bad("tokenizer (the identity of the tokenizer the module was trained with) is "
                   "missing");
    out.tokenizerIdentity = j["tokenizer"].get<std::string>();
    return out;
}

std::string batonJsonText(const RecurrenceConfig& r, const std::string& tokenizerIdentity) {
    nlohmann::ordered_json j;
    j["format"] = "baton-recurrent";
    const bool version2 = r.slots != 1 || r.poolLast != 0 || r.sink;
    j["format_version"] = version2 ? kRecurrentFormatVersion : 1;
    j["window"] = r.window;
    j["overlap"] = r.overlap;
    j["insert_block"] = r.insertBlock;
    j["ffn_width"] = r.ffnWidth;
    j["ffn_depth"] = r.ffnDepth;
    j["residual"] = r.residual;
    j["slot_bias"] = r.slotBias;
    if (version2) {
        j["slots"] = r.slots;
        j["pool_last"] = r.poolLast;
        j["sink"] = r.sink;
    }
    j["tokenizer"] = tokenizerIdentity;
    return j.dump(2) + "\n";
}

} // namespace baton::engine
