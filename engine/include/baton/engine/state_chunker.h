// Cuts a generation's stream into chunks that can be saved together with a state
// blob that matches their text exactly: a chunk ends at a token boundary where the
// text streamed so far is exactly the text of the tokens generated so far (no
// partial character, nothing held back by a stop string). Used by everything that
// autosaves generated text (baton-cli story generate, the app).
#pragma once

#include "baton/engine/generator.h"
#include "baton/engine/tokenizer.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace baton::engine {

// One token of a chunk: the text it completed (empty while a character is unfinished:
// the token that completes it carries all its bytes), and what the model gave it
// (GenerationEvent's logprob and topLogprobs: NaN and empty without
// SamplingOptions::logprobs). The tokens' texts, in order, begin the chunk's text (a
// stop string can cut the text short of the last ones).
struct ChunkToken {
    int32_t id = 0;
    std::string text;
    float logprob = std::numeric_limits<float>::quiet_NaN();
    std::vector<std::pair<int32_t, float>> top;
};

struct StateChunk {
    std::string text;
    std::vector<ChunkToken> tokens;
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
    std::vector<ChunkToken> m_seen; // the tokens of the chunk being gathered
};

} // namespace baton::engine
