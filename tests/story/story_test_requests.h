// What the story engine's suites share: a continuation request as they make them (the
// model is tiny_model.h's loadRecurrentFixture).
#pragma once

#include "tiny_model.h"

#include <baton/engine/model.h>
#include <baton/story/settings.h>
#include <baton/story/story_service.h>

#include <QString>

#include <memory>

namespace baton::test {

// The story's default settings with this seed and length, the end-of-text token
// suppressed (the random model would stop at once), a chunk every 8 tokens.
inline story::ContinueRequest storyRequest(int64_t story, uint64_t seed, int tokens = 40) {
    story::ContinueRequest r;
    r.storyId = story;
    r.settings = story::defaultSettings();
    r.settings.sampling.seed = seed;
    r.settings.sampling.maxTokens = tokens;
    r.settings.sampling.stopAtEndOfText = false;
    r.chunkTokens = 8;
    return r;
}

} // namespace baton::test
