// The log-probabilities of a run of tokens, in the shapes the APIs answer with: one
// builder, so that KoboldCpp's, OpenAI's and llama.cpp's answers agree.
#pragma once

#include <baton/engine/generator.h>
#include <baton/engine/tokenizer.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <utility>
#include <vector>

namespace baton::server {

class TokenLogprobs {
public:
    using Alternatives = std::vector<std::pair<int32_t, float>>;

    void add(const engine::Tokenizer& tok, int32_t token, float logprob,
             const Alternatives& alternatives);
    void add(const engine::Tokenizer& tok, const engine::GenerationEvent& e) {
        add(tok, e.token, e.logprob, e.topLogprobs);
    }
    bool empty() const { return m_tokens.empty(); }
    // Where the next token's text starts in the answer (text_offset).
    int64_t offset() const { return m_offset; }
    void setOffset(int64_t offset) { m_offset = offset; }

    // OpenAI chat's and KoboldCpp's list: [{token, logprob, bytes, top_logprobs: [{token,
    // logprob, bytes}]}].
    nlohmann::ordered_json content() const;
    // OpenAI completions' object: {tokens, token_logprobs, top_logprobs: [{text:
    // logprob}], text_offset}.
    nlohmann::ordered_json legacy() const;
    // KoboldCpp's: the list as "content" beside the legacy fields.
    nlohmann::ordered_json kobold() const;

private:
    struct Entry {
        std::string text;
        float logprob;
        std::vector<std::pair<std::string, float>> top;
        int64_t offset;
    };
    std::vector<Entry> m_tokens;
    int64_t m_offset = 0;
};

// One generated token as llama.cpp's completion_probabilities list has it: {id, token,
// bytes, logprob, top_logprobs} or, with post_sampling_probs, {id, token, bytes, prob,
// top_probs}.
nlohmann::ordered_json llamaTokenProbabilities(const engine::Tokenizer& tok,
                                               const engine::GenerationEvent& e, bool probs);

} // namespace baton::server
