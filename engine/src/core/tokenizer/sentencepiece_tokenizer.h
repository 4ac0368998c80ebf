// SentencePiece models (tokenizer.model), through the baton_spm module.
#pragma once

#include "baton/engine/tokenizer.h"
#include "tokenizer/spm_library.h"

#include <map>
#include <vector>

namespace baton::engine {

class SentencePieceTokenizer final : public Tokenizer {
public:
    static Result<std::shared_ptr<SentencePieceTokenizer>> fromFile(const std::string& path);
    static Result<std::shared_ptr<SentencePieceTokenizer>> fromData(std::string_view serialized);
    ~SentencePieceTokenizer() override;

    std::string kind() const override { return "sentencepiece"; }
    int vocabSize() const override { return static_cast<int>(m_tokenBytes.size()); }
    std::vector<int32_t> encode(std::string_view text) const override;
    std::string decode(const std::vector<int32_t>& ids) const override;
    std::string tokenBytes(int32_t id) const override;
    int eosId() const override { return m_eosId; }
    std::string identity() const override { return m_identity; }

    // Trains a model on the given texts and writes tokenizer.model to outPath.
    // `options` are SentencePiece trainer flags (model_type, vocab_size, ...).
    static Result<void> train(const std::vector<std::string_view>& texts,
                              const std::map<std::string, std::string>& options,
                              const std::string& outPath);

private:
    SentencePieceTokenizer() = default;

    const SpmLibrary* m_lib = nullptr;
    BatonSpmModel* m_model = nullptr;
    std::vector<std::string> m_tokenBytes;
    int m_eosId = -1;
    std::string m_identity;
};

} // namespace baton::engine
