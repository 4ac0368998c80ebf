// GPT-2 byte-level BPE from vocab.json + merges.txt.
#pragma once

#include "baton/engine/tokenizer.h"

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace baton::engine {

class Gpt2BpeTokenizer final : public Tokenizer {
public:
    // Parses and validates the two files' contents.
    static Result<std::shared_ptr<Gpt2BpeTokenizer>> fromFiles(const std::string& vocabJsonPath,
                                                               const std::string& mergesPath);
    static Result<std::shared_ptr<Gpt2BpeTokenizer>> fromData(std::string_view vocabJson,
                                                              std::string_view merges);

    std::string kind() const override { return "gpt2-bpe"; }
    int vocabSize() const override { return static_cast<int>(m_idToBytes.size()); }
    std::vector<int32_t> encode(std::string_view text) const override;
    std::string decode(const std::vector<int32_t>& ids) const override;
    std::string tokenBytes(int32_t id) const override;
    int eosId() const override { return m_eosId; }
    std::string identity() const override { return m_identity; }

private:
    Gpt2BpeTokenizer() = default;
    void bpe(std::string_view piece, std::vector<int32_t>& out) const;

    struct Merge {
        int32_t rank;
        int32_t result;
    };
    std::vector<std::string> m_idToBytes; // raw bytes of each token ("" for a gap)
    std::vector<bool> m_special;          // tokens the engine inserts, never text
    int32_t m_byteToId[256] = {};
    std::unordered_map<uint64_t, Merge> m_merges; // (left id << 32 | right id)
    int m_eosId = -1;
    std::string m_identity;

    mutable std::mutex m_cacheMutex;
    mutable std::unordered_map<std::string, std::vector<int32_t>> m_cache;
};

} // namespace baton::engine
