#include "baton/engine/state_chunker.h"

#include <algorithm>

namespace baton::engine {

StateChunker::StateChunker(const Generator& generator, std::shared_ptr<const Tokenizer> tokenizer,
                           int chunkTokens)
    : m_gen(generator)
    , m_decoder(std::move(tokenizer))
    , m_chunkTokens(std::max(1, chunkTokens)) {}

bool StateChunker::consistent() const {
    return m_decoder.pendingBytes() == 0 && m_decoded == m_text;
}

StateChunk StateChunker::take(bool withState) {
    StateChunk c;
    c.text = std::move(m_text);
    c.tokens = std::move(m_seen);
    if (withState)
        if (auto blob = m_gen.exportState(); blob.ok())
            c.state = std::move(*blob);
    c.streamLength = m_gen.streamLength();
    c.windowIndex = m_gen.windowIndex();
    m_text.clear();
    m_decoded.clear();
    m_seen.clear();
    m_tokens = 0;
    return c;
}

std::optional<StateChunk> StateChunker::onEvent(const GenerationEvent& e) {
    m_text += e.text;
    if (e.token < 0)
        return std::nullopt; // trailing text after the last token
    std::string piece = m_decoder.push(e.token);
    m_decoded += piece;
    m_seen.push_back({e.token, std::move(piece), e.logprob, e.topLogprobs});
    ++m_tokens;
    if (m_tokens >= m_chunkTokens && consistent())
        return take(true);
    return std::nullopt;
}

std::optional<StateChunk> StateChunker::finish() {
    if (m_text.empty())
        return std::nullopt;
    return take(consistent());
}

} // namespace baton::engine
