// A story's generation settings: one codec for the JSON kept in Story::settingsJson,
// used by the app and baton-cli alike. Every key is optional (a missing
// key takes the default: the Balanced preset, the model's windows, a new seed for
// every generation):
//
//   {"temperature": 0.8, "top_k": 0, "top_p": 0.95, "repetition_penalty": 1.1,
//    "max_tokens": 200, "seed": 7, "stop": ["\n>"], "ignore_eos": false,
//    "window": 128, "overlap": 16, "memory": "every_window", "lore_budget": 32,
//    "trim_sentences": true, "recall": true, "recall_budget": 64, "recall_chunks": 3,
//    "recall_banned": [[12, 0]]}
//
// A key of the wrong type or out of range is an error that names it; unknown keys are
// kept out of the way (ignored), so a newer build's settings still open.
#pragma once

#include "baton/story/error.h"

#include <baton/engine/sampling.h>
#include <baton/engine/windows.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace baton::story {

// Where the story's memory is read (story/prompt.h).
enum class MemoryLayout {
    EveryWindow, // at the start of every window (the default, as in every peer)
    Once,        // once, before the first passage; later windows see it only through the state
};
const char* memoryLayoutName(MemoryLayout layout); // "every_window" / "once"

// Recall (recall.h): the story's own past read again when the recent text names it.
struct RecallSettings {
    bool enabled = true;
    int budget = 0; // tokens for the recalled excerpts together; 0: a quarter of T,
                    // within the room world info leaves (context.h)
    int chunks = 3; // the most excerpts in a window (1 to kMaxRecallChunks)
    // Chunks the writer banned from recall: (passage, the chunk's first byte).
    std::vector<std::pair<int64_t, int64_t>> banned;
};
constexpr int kMaxRecallChunks = 16;

struct StorySettings {
    engine::SamplingOptions sampling; // see defaultSettings()
    bool fixedSeed = false;           // false: every generation draws a new seed
    engine::WindowSettings windows;   // window 0: the model's default
    MemoryLayout memory = MemoryLayout::EveryWindow;
    int loreBudget = 0; // tokens for all world-info entries together; 0: what leaves half
                        // of T to the story beside the memory and the note (context.h)
    // A generation that stops in the middle of a sentence (at max tokens) is cut back to
    // the end of its last whole sentence (KoboldAI Lite's "trim sentences").
    bool trimSentences = false;
    RecallSettings recall;
};

// A named sampler preset (the app's Focused / Balanced / Creative / Min-p + DRY): values
// of the sampler settings table (engine/sampler_settings.h) by key; every setting it
// does not name is at its default (off).
struct Preset {
    const char* name;
    std::vector<std::pair<const char*, double>> values;
};
const std::vector<Preset>& presets();
constexpr int kBalancedPreset = 1;
// Sets every sampler setting of the table: the preset's values, the defaults for the rest.
void applyPreset(const Preset& preset, engine::SamplingOptions& sampling);
// Whether every sampler setting is what the preset makes it.
bool matchesPreset(const Preset& preset, const engine::SamplingOptions& sampling);

// Balanced, 200 tokens, stop at the end of text, no fixed seed, the model's windows.
StorySettings defaultSettings();

// Parses a story's settings; "" reads as "{}". Checks every value it reads (the
// sampler's ranges, T >= 1, 0 <= o < T when both are given, the memory layout's name).
Result<StorySettings> parseSettings(std::string_view json);
// The JSON for these settings: every sampler value; the seed only when fixed;
// stop strings and ignore_eos only when set; the windows only when not the model's;
// the memory layout only when "once"; the world-info budget and trim_sentences only when
// set; recall's settings only when not the defaults.
std::string settingsJson(const StorySettings& settings);

} // namespace baton::story
