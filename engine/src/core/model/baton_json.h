// baton.json: what makes a Hugging Face folder a recurrent Baton checkpoint.
//   {"format": "baton-recurrent", "format_version": 1, "window": T, "overlap": o,
//    "insert_block": 1, "ffn_width": 200, "ffn_depth": 3, "residual": true,
//    "slot_bias": false, "tokenizer": "<identity of the tokenizer files>"}
// Version 2 adds "slots" (default 1), "pool_last" (0) and "sink" (false); version 3
// adds "read_blocks" (1), "write" ("pool" or "tokens") and "gate" (false). A module is
// written with the lowest version that holds it (RecurrenceConfig::formatVersion).
#pragma once

#include "baton/engine/error.h"
#include "baton/engine/model_info.h"

#include <string>

namespace baton::engine {

// adapter.json's "format": a recurrence adapter (train --adapter), which also names the
// baseline model it goes on ("base_identity", "base_name").
constexpr const char* kAdapterFormat = "baton-recurrence-adapter";

struct BatonJson {
    RecurrenceConfig recurrence;
    std::string tokenizerIdentity;
};

// Parses and checks the values against the model they belong to.
Result<BatonJson> parseBatonJson(std::string_view text, const std::string& path,
                                 const ModelConfig& model);
std::string batonJsonText(const RecurrenceConfig& recurrence, const std::string& tokenizerIdentity);

} // namespace baton::engine
