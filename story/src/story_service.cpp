#include "baton/story/story_service.h"

#include "baton/story/adventure.h"
#include "baton/story/context.h"
#include "baton/story/edit.h"
#include "baton/story/prompt.h"
#include "baton/story/resume.h"
#include "baton/story/retry.h"
#include "chunk_writer.h"

#include <baton/engine/state_chunker.h>
#include <baton/engine/windows.h>
#include <baton/storage/database.h>
#include <baton/storage/story_store.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace baton::story {

namespace {

bool stateProblem(engine::ErrorCode code) {
    return code == engine::ErrorCode::StateCorrupt || code == engine::ErrorCode::StateMismatch ||
           code == engine::ErrorCode::StateVersion;
}

// What a kept generator's stream was read from: the path's passages as they were.
std::vector<std::pair<int64_t, int64_t>> pathKey(const std::vector<storage::Passage>& path) {
    std::vector<std::pair<int64_t, int64_t>> key;
    for (const auto& p : path)
        key.push_back({p.id, p.editedAt});
    return key;
}

} // namespace

struct StoryService::KeptGenerator {
    std::unique_ptr<engine::Generator> generator;
    int64_t storyId = 0;
    std::string modelIdentity;
    engine::WindowSettings windows;
    std::vector<int32_t> pinned;
    std::string memory;
    std::vector<std::pair<int64_t, int64_t>> path;
};

StoryService::StoryService(storage::Database& db)
    : m_db(db) {}

StoryService::~StoryService() = default;

void StoryService::forgetGenerator() {
    m_kept.reset();
}

Result<ContinueResult>
StoryService::continueStory(std::shared_ptr<const engine::Model> model,
                            const ContinueRequest& asked,
                            const std::function<bool(const engine::GenerationEvent&)>& onToken,
                            const engine::CancelToken& cancel) {
    if (!model)
        return requestError("no model is loaded");
    const int64_t id = asked.storyId;
    auto stored = m_db.stories().get(id);
    if (!stored)
        return storageError(stored.error());
    // The story's own rules on top of the settings asked for (an adventure stops before
    // the player's next turn), for every client alike.
    ContinueRequest request = asked;
    request.settings.sampling = continuationSampling(stored->mode, asked.settings.sampling);
    const engine::ModelInfo& info = model->info();
    if (request.alternatives < 0 || request.alternatives > 20)
        return requestError("the alternatives recorded per token must be 0 to 20");
    if (request.branch && (request.retry || !request.userText.empty()))
        return requestError("a branch at a token is made without typed text or a retry");
    if (request.alternatives > 0)
        request.settings.sampling.logprobs =
            std::max(request.settings.sampling.logprobs, request.alternatives);
    if (auto r = engine::validateSampling(request.settings.sampling); !r)
        return engineError(r.error());
    // Checked before anything is saved: the windows and the memory's room in them.
    if (auto layout = windowLayout(*stored, *model, request.settings); !layout)
        return layout.error();

    ContinueResult out;
    // 1. The user's text, or back to where the last generation began.
    if (!request.userText.empty()) {
        auto p = m_db.stories().append(id, request.userText, storage::PassageAuthor::User);
        if (!p)
            return storageError(p.error());
        out.userPassageId = *p;
    }
    if (request.retry) {
        auto path = m_db.stories().currentPath(id);
        if (!path)
            return storageError(path.error());
        const auto target = retryTarget(*path);
        if (!target)
            return requestError("there is no generation at the end of the story to retry");
        if (auto r = m_db.stories().setCurrent(id, target->parentId); !r)
            return storageError(r.error());
    }

    StorySettings recorded = request.settings;
    recorded.fixedSeed = true; // the generation is recorded with the seed it used
    if (request.branch) {
        auto branched = branchAtToken(m_db, id, *request.branch, settingsJson(recorded));
        if (!branched)
            return branched.error();
        out.branchPassageId = *branched;
    }

    // 2. The plan: where to resume (the deepest saved state for this model, windows
    // and layout), what every window starts with, the world info that fires.
    auto plan = planContinuation(m_db, *model, id, request.settings);
    if (!plan)
        return plan.error();
    const ResumePoint* point = &plan->point;
    const engine::WindowSettings windows = plan->windows;
    const storage::Story* story = &plan->story;
    out.parentId = point->leaf();
    out.lore = plan->lore;

    // 3. The generator: the kept one, one from the saved state, or a new one.
    std::unique_ptr<engine::Generator> gen;
    Prompt prompt;
    int64_t readBefore = 0; // what the kept generator had read before
    if (m_kept && m_kept->storyId == id && m_kept->modelIdentity == info.identity &&
        m_kept->windows.window == windows.window && m_kept->windows.overlap == windows.overlap &&
        m_kept->pinned == plan->pinned && m_kept->memory == story->memory &&
        m_kept->path == pathKey(point->path)) {
        gen = std::move(m_kept->generator);
        readBefore = gen->tokensRead();
        prompt = plan->promptAfter(point->leaf());
        out.reusedGenerator = true;
    }
    m_kept.reset();
    if (!gen && point->state) {
        auto imported = engine::Generator::importState(model, point->state->blob, windows, cancel,
                                                       plan->pinned);
        if (imported) {
            gen = std::move(*imported);
            out.resumedFromPassage = point->state->passageId;
            prompt = plan->promptAfter(point->state->passageId);
        } else if (!stateProblem(imported.error().code)) {
            return engineError(imported.error());
        } else {
            out.notice = "the saved state could not be used (" + imported.error().message +
                         "); the story's text is read instead";
        }
    }
    if (!gen) {
        auto created = engine::Generator::create(model, windows);
        if (!created)
            return engineError(created.error());
        gen = std::move(*created);
        prompt = plan->promptAfter(0);
        if (!plan->pinned.empty()) {
            // Every window starts with start-of-text and the memory.
            if (auto r = gen->pin(plan->pinned); !r)
                return engineError(r.error());
        } else if (const int bos = engine::startOfTextToken(info.config);
                   !prompt.segments.empty() && bos >= 0) {
            // The same start as a story generated from nothing: start-of-text first.
            if (auto r = gen->append({bos}, cancel); !r)
                return engineError(r.error());
        }
    }
    // The text after the generator's stream, in two reads when the guidance goes before
    // its unfinished last sentence (describeContext lays out the same reads).
    const std::string text = prompt.text();
    const bool split = !plan->guide.empty() && plan->tailBytes <= text.size();
    const size_t cut = split ? text.size() - plan->tailBytes : text.size();
    auto read = [&](std::string_view part) -> Result<void> {
        if (!part.empty())
            if (auto r = gen->appendText(part, cancel); !r)
                return engineError(r.error());
        return {};
    };
    if (auto r = read(std::string_view(text).substr(0, cut)); !r)
        return r.error();
    const int64_t beforeTail = gen->streamLength();
    if (auto r = read(std::string_view(text).substr(cut)); !r)
        return r.error();
    const int64_t tail =
        split ? gen->streamLength() - beforeTail
              : tokensCovering(gen->windowTokens(), plan->tailBytes, *model->tokenizer());
    if (!plan->guide.empty() || gen->guidePosition() >= 0)
        if (auto r = gen->setGuide(plan->guide, tail); !r)
            return engineError(r.error());
    out.readText = text;
    out.tokensRead = gen->tokensRead() - readBefore;

    // 4. Generate, saving each chunk with its state as one recorded generation.
    ChunkWriter writer(m_db,
                       {id, out.parentId, settingsJson(recorded), info.identity, plan->key.layout,
                        plan->lore.recordJson(),
                        request.alternatives > 0 ? model->tokenizer().get() : nullptr},
                       *gen);
    engine::StateChunker chunker(*gen, model->tokenizer(), request.chunkTokens);
    int64_t savedStream = -1; // the stream length of the last chunk saved with its state
    auto save = [&](std::optional<engine::StateChunk> chunk) {
        if (!chunk)
            return true;
        const bool withState = !chunk->state.empty();
        const int64_t length = chunk->streamLength;
        if (!writer.save(std::move(*chunk)))
            return false;
        savedStream = withState ? length : -1;
        return true;
    };
    auto result = gen->generate(
        request.settings.sampling,
        [&](const engine::GenerationEvent& e) {
            const bool go = onToken ? onToken(e) : true;
            return save(chunker.onEvent(e)) && go; // a failed save stops generation
        },
        cancel);
    // What was streamed is saved even when generation failed or stopped.
    save(chunker.finish());
    writer.retryFailed();
    if (!result)
        return engineError(result.error());
    out.generation = std::move(*result);
    out.generationId = writer.generationId();
    out.lastPassageId = writer.chunks() > 0 ? writer.lastPassage() : out.parentId;
    out.chunks = writer.chunks();
    out.states = writer.states();
    out.saveError = writer.error();

    // An unfinished last sentence cut back (when asked, and the model did not end it).
    if (request.settings.trimSentences && !out.saveError && out.generationId != 0 &&
        out.generation.reason != engine::StopReason::EndOfText) {
        auto trimmed = trimToSentence(m_db, id, out.generationId);
        if (!trimmed)
            return trimmed.error();
        out.trimmedBytes = *trimmed;
        if (out.trimmedBytes > 0) {
            auto leaf = m_db.stories().get(id);
            if (leaf)
                out.lastPassageId = leaf->currentPassageId;
            return out; // the generator's stream holds what was cut: not kept
        }
    }

    // Keep the generator when its stream is exactly the saved path's (the last chunk
    // was saved with its state): the next continuation of this path need not read it.
    if (!out.saveError && savedStream == gen->streamLength()) {
        auto path = m_db.stories().currentPath(id);
        if (path) {
            m_kept = std::make_unique<KeptGenerator>();
            m_kept->generator = std::move(gen);
            m_kept->storyId = id;
            m_kept->modelIdentity = info.identity;
            m_kept->windows = windows;
            m_kept->pinned = plan->pinned;
            m_kept->memory = story->memory;
            m_kept->path = pathKey(*path);
        }
    }
    return out;
}

StoryServiceOnFile::StoryServiceOnFile(std::string databasePath)
    : m_path(std::move(databasePath)) {}

StoryServiceOnFile::~StoryServiceOnFile() {
    m_service.reset();
    m_db.reset();
}

Result<StoryService*> StoryServiceOnFile::service() {
    if (!m_service) {
        storage::OpenOptions options;
        options.quickCheck = false; // the app checked the file when it opened it
        auto db = storage::Database::open(m_path, options);
        if (!db)
            return storageError(db.error());
        m_db = std::move(*db);
        m_service = std::make_unique<StoryService>(*m_db);
    }
    return m_service.get();
}

} // namespace baton::story
