#include "baton/engine/tokenizer.h"

#include "tokenizer/gpt2_bpe.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "util/files.h"
#include "util/utf8.h"

namespace baton::engine {

Result<std::shared_ptr<const Tokenizer>> loadTokenizer(const std::string& folder) {
    if (!files::isDirectory(folder))
        return makeError(ErrorCode::FileNotFound, "model folder not found: " + folder);
    const std::string spm = files::join(folder, "tokenizer.model");
    if (files::exists(spm)) {
        auto tok = SentencePieceTokenizer::fromFile(spm);
        if (!tok)
            return tok.error();
        return std::shared_ptr<const Tokenizer>(std::move(*tok));
    }
    const std::string vocab = files::join(folder, "vocab.json");
    const std::string merges = files::join(folder, "merges.txt");
    for (const auto& path : {vocab, merges})
        if (!files::exists(path))
            return makeError(ErrorCode::FileNotFound,
                             "the model folder has no tokenizer: " + path +
                                 " is missing (a GPT-2 folder needs vocab.json and merges.txt, "
                                 "a SentencePiece model needs tokenizer.model)");
    auto tok = Gpt2BpeTokenizer::fromFiles(vocab, merges);
    if (!tok)
        return tok.error();
    return std::shared_ptr<const Tokenizer>(std::move(*tok));
}

StreamDecoder::StreamDecoder(std::shared_ptr<const Tokenizer> tokenizer)
    : m_tokenizer(std::move(tokenizer)) {}

std::string StreamDecoder::push(int32_t id) {
    return m_tokenizer ? pushBytes(m_tokenizer->tokenBytes(id)) : std::string();
}

std::string StreamDecoder::pushBytes(std::string_view bytes) {
    m_pending.append(bytes);
    const size_t complete = utf8::completePrefixLength(m_pending);
    std::string out = utf8::sanitize(std::string_view(m_pending).substr(0, complete));
    m_pending.erase(0, complete);
    return out;
}

std::string StreamDecoder::finish() {
    std::string out = utf8::sanitize(m_pending);
    m_pending.clear();
    return out;
}

} // namespace baton::engine
