// The chunk transaction: each chunk a generation streams is saved in one transaction
// as a model passage under an explicit parent (the previous chunk, or the passage the
// generation continues), marked with the generation's id, with the recurrent state
// after it; then its ancestors' states in finished windows are pruned to one per window
// (storage/state_store.h: pruneAncestors), and the token alternatives recorded with it
// (token_choices.h). The first chunk records the generation
// itself. A chunk that cannot be saved is kept and saved with the next one (whose state
// covers both).
#pragma once

#include "baton/story/error.h"

#include <baton/engine/generator.h>
#include <baton/engine/state_chunker.h>
#include <baton/storage/database.h>

#include <cstdint>
#include <optional>
#include <string>

namespace baton::story {

struct ChunkTarget {
    int64_t storyId = 0;
    int64_t parentId = 0;      // the passage the generation continues (0: the beginning)
    std::string settingsJson;  // recorded with the generation
    std::string modelIdentity; // the states' keys
    int layout = 0;            // the states' window layout (prompt.h: stateLayout)
    std::string loreJson;      // the world info the generation read (lore.h)
    // Decodes the token alternatives recorded with each chunk (token_choices.h); null:
    // none are saved.
    const engine::Tokenizer* tokenizer = nullptr;
};

class ChunkWriter {
public:
    ChunkWriter(storage::Database& db, ChunkTarget target, const engine::Generator& generator);

    // Saves a complete chunk; false when the database refused it (kept for the next).
    bool save(engine::StateChunk chunk);
    // After generation: saves a chunk left over by an earlier failure.
    bool retryFailed();

    int64_t generationId() const { return m_generation; }
    int64_t lastPassage() const { return m_parent; }
    int64_t chunks() const { return m_chunks; }
    int64_t states() const { return m_states; }
    const std::optional<storage::StorageError>& error() const { return m_error; }

private:
    storage::Database& m_db;
    ChunkTarget m_target;
    const engine::Generator& m_gen;
    int64_t m_parent = 0;
    int64_t m_generation = 0;
    int64_t m_chunks = 0, m_states = 0;
    std::optional<engine::StateChunk> m_failed;
    std::optional<storage::StorageError> m_error;
};

} // namespace baton::story
