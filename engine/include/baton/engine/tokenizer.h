// Tokenizers behind one interface: GPT-2 byte-level BPE (vocab.json + merges.txt)
// and SentencePiece (tokenizer.model).
//
// Thread-safety: a Tokenizer is immutable once made (GPT-2's word cache is locked
// inside); any number of threads may encode and decode with one at once.
//
// Text is bytes in, bytes out. Rules every implementation follows:
//  - A literal "<|endoftext|>" in text is ordinary text. Special tokens are only
//    ever inserted by the engine, never produced by encode().
//  - Invalid UTF-8: GPT-2 BPE encodes every byte losslessly (a byte that is not part
//    of a valid UTF-8 sequence is classified like punctuation by the pre-tokenizer
//    and kept as its own byte), so decode(encode(s)) == s for any byte string.
//    SentencePiece models see each invalid byte replaced by U+FFFD first.
//  - tokenBytes(id) is what a token contributes to the text when streaming; a
//    special token (end of text) contributes nothing.
#pragma once

#include "baton/engine/error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace baton::engine {

class Tokenizer {
public:
    virtual ~Tokenizer() = default;

    virtual std::string kind() const = 0; // "gpt2-bpe" or "sentencepiece"
    virtual int vocabSize() const = 0;
    virtual std::vector<int32_t> encode(std::string_view text) const = 0;
    virtual std::string decode(const std::vector<int32_t>& ids) const = 0;
    virtual std::string tokenBytes(int32_t id) const = 0;
    virtual int eosId() const = 0; // -1 when the tokenizer has none
    // Content hash of the tokenizer files (16 hex digits).
    virtual std::string identity() const = 0;
};

// Loads the tokenizer a checkpoint folder carries: tokenizer.model (SentencePiece)
// if present, else vocab.json + merges.txt (GPT-2 BPE).
Result<std::shared_ptr<const Tokenizer>> loadTokenizer(const std::string& folder);

// Turns a stream of token ids into text that never ends inside a UTF-8 character.
// Bytes that can never become valid UTF-8 are emitted as U+FFFD.
class StreamDecoder {
public:
    explicit StreamDecoder(std::shared_ptr<const Tokenizer> tokenizer);

    // Adds one token; returns the text that became complete (possibly empty).
    std::string push(int32_t id);
    // Adds raw bytes (for callers that already hold token bytes).
    std::string pushBytes(std::string_view bytes);
    // Ends the stream: a dangling partial character comes out as U+FFFD.
    std::string finish();
    // Bytes held back because they may be the start of a character.
    size_t pendingBytes() const { return m_pending.size(); }

private:
    std::shared_ptr<const Tokenizer> m_tokenizer;
    std::string m_pending;
};

} // namespace baton::engine
