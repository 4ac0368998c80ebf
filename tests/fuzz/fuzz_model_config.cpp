// A checkpoint's config.json (parseHfConfig, validateModelConfig) and baton.json
// (parseBatonJson against the config it belongs to): either a clear error or a
// configuration whose numbers are usable (the configs that lie in their numbers are
// refused: non-positive or NaN epsilon, heads that do not divide the width, zero
// positions, unsupported GPT-2 options).
#include "fuzz_support.h"

#include "model/baton_json.h"
#include "model/hf_config.h"

#include <cmath>

using namespace baton;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto parts = fuzz::splitParts(fuzz::asText(data, size), 2);
    auto config = engine::parseHfConfig(parts[0], "config.json");
    if (!config) {
        fuzz::check(!config.error().message.empty(), "an error says what is wrong");
        return 0;
    }
    const engine::ModelConfig& c = *config;
    fuzz::check(bool(engine::validateModelConfig(c)), "a parsed config is valid");
    fuzz::check(c.nEmbd > 0 && c.nHead > 0 && c.nEmbd % c.nHead == 0, "heads divide the width");
    fuzz::check(c.nLayer > 0 && c.nPositions > 0 && c.vocabSize > 0, "positive sizes");
    fuzz::check(std::isfinite(c.layerNormEps) && c.layerNormEps > 0, "usable epsilon");
    // The config survives its own round trip.
    auto again = engine::parseHfConfig(engine::hfConfigJson(c), "config.json");
    fuzz::check(bool(again), "hfConfigJson is read back");
    auto baton = engine::parseBatonJson(parts[1], "baton.json", c);
    if (baton) {
        auto text = engine::batonJsonText(baton->recurrence, baton->tokenizerIdentity);
        fuzz::check(bool(engine::parseBatonJson(text, "baton.json", c)), "baton.json round trip");
    }
    return 0;
}
