#include "model/baton_json.h"

#include "util/json.h"

namespace baton::engine {

Result<BatonJson> parseBatonJson(std::string_view text, const std::string& path,
                                 const ModelConfig& model) {
    auto parsed = parseJson(text, path);
    if (!parsed)
        return parsed.error();
    const json::Json& j = *parsed;
    auto bad = [&](const std::string& what) {
        return makeError(ErrorCode::BadConfig, path + ": " + what);
    };
    if (json::stringOrEmpty(j, "format") != "baton-recurrent")
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
    r.residual = r.slotBias = r.sink = false;
    r.slots = 1;
    r.poolLast = 0;
    r.readBlocks = 1;
    r.writeTokens = r.gate = r.memoryTokens = false;
    json::FieldReader f(j);
    f.integer("window", 1, model.nPositions, r.window, f.Required);
    f.integer("insert_block", 0, model.nLayer - 1, r.insertBlock, f.Required);
    f.integer("ffn_width", 1, 65536, r.ffnWidth, f.Required);
    f.integer("ffn_depth", 0, 64, r.ffnDepth, f.Required);
    f.boolean("residual", r.residual);
    f.boolean("slot_bias", r.slotBias);
    f.boolean("sink", r.sink);
    f.integer("slots", 1, 64, r.slots);
    f.integer("pool_last", 0, model.nPositions, r.poolLast);
    f.integer("read_blocks", 1, model.nLayer, r.readBlocks);
    std::string write = "pool";
    f.string("write", write);
    f.boolean("gate", r.gate);
    f.boolean("memory_tokens", r.memoryTokens);
    f.integer("overlap", 0, r.window - 1, r.overlap, f.Required);
    f.string("tokenizer", out.tokenizerIdentity, f.Required);
    if (!f.ok())
        return bad(f.error());
    if (write != "pool" && write != "tokens")
        return bad("write must be \"pool\" or \"tokens\", not \"" + write + "\"");
    r.writeTokens = write == "tokens";
    if (r.insertBlock + r.readBlocks > model.nLayer)
        return bad("read_blocks = " + std::to_string(r.readBlocks) +
                   " from insert_block = " + std::to_string(r.insertBlock) +
                   " runs past the model's " + std::to_string(model.nLayer) + " blocks");
    if (r.memoryTokens && r.readBlocks < 2)
        return bad("memory_tokens needs read_blocks of 2 or more");
    if (r.poolLast > 0 && r.poolLast < r.slots)
        return bad("pool_last = " + std::to_string(r.poolLast) +
                   " is less than slots = " + std::to_string(r.slots));
    return out;
}

std::string batonJsonText(const RecurrenceConfig& r, const std::string& tokenizerIdentity) {
    nlohmann::ordered_json j;
    j["format"] = "baton-recurrent";
    const int version = r.formatVersion();
    j["format_version"] = version;
    j["window"] = r.window;
    j["overlap"] = r.overlap;
    j["insert_block"] = r.insertBlock;
    j["ffn_width"] = r.ffnWidth;
    j["ffn_depth"] = r.ffnDepth;
    j["residual"] = r.residual;
    j["slot_bias"] = r.slotBias;
    if (version >= 2) {
        j["slots"] = r.slots;
        j["pool_last"] = r.poolLast;
        j["sink"] = r.sink;
    }
    if (version >= 3) {
        j["read_blocks"] = r.readBlocks;
        j["write"] = r.writeTokens ? "tokens" : "pool";
        j["gate"] = r.gate;
    }
    if (version >= 4)
        j["memory_tokens"] = r.memoryTokens;
    j["tokenizer"] = tokenizerIdentity;
    return j.dump(2) + "\n";
}

std::string describeRecurrence(const RecurrenceConfig& r) {
    std::string s = "trained at T = " + std::to_string(r.window) +
                    ", o = " + std::to_string(r.overlap) + "; " + std::to_string(r.slots) +
                    (r.slots == 1 ? " state slot" : " state slots") + " into block " +
                    std::to_string(r.insertBlock) + ", " + (r.residual ? "residual" : "plain") +
                    " FFN " + std::to_string(r.ffnDepth) + " x " + std::to_string(r.ffnWidth);
    if (r.poolLast > 0)
        s += ", pooled over the last " + std::to_string(r.poolLast) + " positions";
    if (r.slotBias)
        s += ", slot logit bias";
    if (r.sink)
        s += ", attention sink";
    if (r.readBlocks > 1)
        s += std::string(r.memoryTokens ? ", read as memory tokens" : ", read") + " by blocks " +
             std::to_string(r.insertBlock) + "-" + std::to_string(r.insertBlock + r.readBlocks - 1);
    else if (r.memoryTokens)
        s += ", read as memory tokens";
    if (r.writeTokens)
        s += ", written by write tokens";
    if (r.gate)
        s += ", gated";
    return s;
}

} // namespace baton::engine
