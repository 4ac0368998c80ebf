// The token alternatives stored with a passage (story/token_choices.h): refused as
// damaged with a message, or decoded into choices that encode to a blob with the same
// choices, and that describe their own text (alignChoices).
#include "fuzz_support.h"

#include <baton/story/token_choices.h>

#include <string>

using namespace baton;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::vector<uint8_t> bytes(data, data + size);
    auto choices = story::decodeChoices(bytes);
    if (!choices) {
        fuzz::check(!choices.error().message.empty(), "an error says what is wrong");
        return 0;
    }
    // Re-encoded, the same choices (a NaN's payload is not kept: it reads as unknown).
    auto again = story::decodeChoices(story::encodeChoices(*choices));
    fuzz::check(bool(again) && again->size() == choices->size(), "an accepted blob round-trips");
    for (size_t i = 0; i < choices->size(); ++i) {
        const auto& a = (*again)[i];
        const auto& b = (*choices)[i];
        fuzz::check(a.text == b.text && a.alternatives.size() == b.alternatives.size(),
                    "the round trip keeps every token and alternative");
    }
    std::string text;
    for (const auto& c : *choices)
        text += c.text;
    fuzz::check(story::alignChoices(*choices, text).size() == choices->size(),
                "the choices describe their own text");
    return 0;
}
