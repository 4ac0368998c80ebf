// Cuts a generation's stream into chunks that can be saved together with a state
// blob that matches their text exactly: a chunk ends at a token boundary where the
// text streamed so far is exactly the text of the tokens generated so far (no
// partial character, nothing held back by a stop string). Used by everything that
// autosaves generated text (baton-cli story generate, the app).
#pragma once

#include "baton/engine/generator.h"
#include "baton/engine/tokenizer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace baton::engine {

struct StateChunk {
    std::string text;
    std::vector<uint8_t> state; // empty when no state matches the text (only at the end)
    int64_t streamLength = 0;   // tokens in the whole stream after this chunk
    int64_t windowIndex = 0;    // the open window's index (windowStart / stride)
};

class StateChunker {
public:
    // chunkTokens: the least number of tokens per chunk (a chunk may run longer until
    // its text is consistent).
    StateChunker(const Generator& generator, std::shared_ptr<const Tokenizer> tokenizer,
                 int chunkTokens);

    // Feed every event of Generator::generate; returns a chunk when one is complete.
    std::optional<StateChunk> onEvent(const GenerationEvent& event);
    // After generation: what is left, with a state only when it matches the text.
    std::optional<StateChunk> finish();

private:
    bool consistent() const;
    StateChunk take(bool withState);

    const Generator& m_gen;
    StreamDecoder m_decoder;
    int m_chunkTokens;
    int m_tokens = 0;
    std::string m_text, m_decoded;
};

} // namespace baton::engine
