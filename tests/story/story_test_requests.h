// What the story engine's suites share: the recurrent fixture model they continue
// stories with (T 16, o 4), and a continuation request as they make them.
#pragma once

#include "tiny_model.h"

#include <baton/engine/model.h>
#include <baton/story/settings.h>
#include <baton/story/story_service.h>

#include <QString>

#include <memory>

namespace baton::test {

// The recurrent fixture written into `dir` and loaded (null when either fails).
inline std::shared_ptr<engine::Model> loadRecurrentStoryModel(const QString& dir) {
    engine::RecurrenceConfig rec;
    rec.window = 16;
    rec.overlap = 4;
    if (!writeRecurrentFixture(dir, rec))
        return nullptr;
    auto model = engine::Model::load(dir.toStdString());
    return model ? *model : nullptr;
}

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
