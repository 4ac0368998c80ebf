// The recurrent state blob (Generator::exportState / importState) as bytes, without
// torch: "BATONST\0", u32 version, 16-byte model identity, i32 T, o, k, insert block,
// i32 slots S (version 2 on; 1 in version 1), i32 tokens pinned to every window
// (version 3 on), u8 has-state, i64 window start, stream length, roll-overs, u32 token
// count, i32 tokens..., f32 state[S * k] (if has-state), f32 pool[S * k] (recurrent
// models), u64 checksum of everything before it.
#pragma once

#include "baton/engine/error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace baton::engine {

struct StateBlob {
    uint32_t version = 0; // as read (decode) or kStateFormatVersion (encode)
    std::string identity; // the model's identity, 16 characters
    int32_t window = 0, overlap = 0, width = 0, insertBlock = 0, slots = 1;
    int32_t pinned = 0; // tokens pinned to every window; -1: not recorded (versions 1, 2)
    bool hasState = false;
    int64_t windowStart = 0, streamLength = 0, rollovers = 0;
    std::vector<int32_t> tokens; // the open window's
    std::vector<float> state;    // slots * width when hasState
    std::vector<float> pooled;   // slots * width for a recurrent model, else empty
};

std::vector<uint8_t> encodeStateBlob(const StateBlob& blob);

// Checks the blob's structure: magic, version (StateVersion for one this build does not
// read), checksum, lengths and positions (StateCorrupt). What it must match (the
// model's identity, shape, windows and vocabulary, and that a recurrent model's blob
// carries a pool) is the caller's to check.
Result<StateBlob> decodeStateBlob(const std::vector<uint8_t>& blob);

} // namespace baton::engine
