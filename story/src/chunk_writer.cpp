#include "chunk_writer.h"

#include <baton/storage/generation_store.h>
#include <baton/storage/state_store.h>
#include <baton/storage/story_store.h>
#include <baton/storage/token_choice_store.h>
#include <baton/story/token_choices.h>

#include <cmath>

namespace baton::story {

namespace {

// The chunk's tokens as the choices stored with its passage: each alternative's text
// decoded alone (the end-of-text token and pieces of a character are no text to pick,
// and encodeChoices leaves them out); none when the generation recorded no
// probabilities.
std::vector<TokenChoice> choicesOf(const engine::StateChunk& chunk,
                                   const engine::Tokenizer& tokenizer) {
    std::vector<TokenChoice> out;
    bool midCharacter = false; // the token before ended inside a character
    for (const engine::ChunkToken& t : chunk.tokens) {
        if (std::isnan(t.logprob))
            return {};
        TokenChoice c{t.text, t.logprob, {}};
        // A token that completes a character carries all its bytes, but the model chose it
        // after the character's first bytes: its alternatives would not fit a branch made
        // before them. It has none.
        if (!midCharacter)
            for (const auto& [id, logprob] : t.top)
                if (id != tokenizer.eosId())
                    c.alternatives.push_back({tokenizer.decode({id}), logprob});
        midCharacter = t.text.empty();
        out.push_back(std::move(c));
    }
    return alignChoices(std::move(out), chunk.text);
}

} // namespace

ChunkWriter::ChunkWriter(storage::Database& db, ChunkTarget target,
                         const engine::Generator& generator)
    : m_db(db)
    , m_target(std::move(target))
    , m_gen(generator)
    , m_parent(m_target.parentId) {}

bool ChunkWriter::save(engine::StateChunk chunk) {
    if (m_failed) { // the earlier chunk goes in with this one; this one's state covers both
        chunk.text = m_failed->text + chunk.text;
        chunk.tokens.insert(chunk.tokens.begin(), m_failed->tokens.begin(), m_failed->tokens.end());
        m_failed.reset();
    }
    if (chunk.text.empty())
        return true;
    const engine::WindowSettings& w = m_gen.windows();
    const bool withState = !chunk.state.empty();
    int64_t passageId = 0, generation = m_generation;
    auto r = m_db.transaction([&]() -> storage::Result<void> {
        if (generation == 0) {
            auto g = m_db.generations().begin(m_target.storyId, m_target.parentId,
                                              m_target.settingsJson, m_target.loreJson);
            if (!g)
                return g.error();
            generation = *g;
        }
        auto passage = m_db.stories().addPassage(m_target.storyId, m_parent, chunk.text,
                                                 storage::PassageAuthor::Model, true, generation);
        if (!passage)
            return passage.error();
        passageId = *passage;
        if (m_target.tokenizer)
            if (const auto choices = choicesOf(chunk, *m_target.tokenizer); !choices.empty())
                if (auto r = m_db.tokenChoices().set(passageId, encodeChoices(choices)); !r)
                    return r.error();
        if (!withState)
            return {};
        storage::StoredState s;
        s.passageId = passageId;
        s.windowIndex = chunk.windowIndex;
        s.tokenOffset = chunk.streamLength;
        s.modelIdentity = m_target.modelIdentity;
        s.window = w.window;
        s.overlap = w.overlap;
        s.formatVersion = static_cast<int>(engine::kStateFormatVersion);
        s.layout = m_target.layout;
        s.blob = chunk.state;
        auto saved = m_db.states().save(s);
        if (!saved)
            return saved.error();
        auto pruned = m_db.states().pruneAncestors(s);
        if (!pruned)
            return pruned.error();
        return {};
    });
    if (!r.ok()) {
        m_error = r.error();
        m_failed = std::move(chunk);
        return false;
    }
    m_error.reset();
    m_generation = generation;
    m_parent = passageId;
    ++m_chunks;
    m_states += withState ? 1 : 0;
    return true;
}

bool ChunkWriter::retryFailed() {
    if (!m_failed)
        return true;
    engine::StateChunk retry = std::move(*m_failed);
    m_failed.reset();
    return save(std::move(retry));
}

} // namespace baton::story
