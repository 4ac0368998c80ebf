#include "logprobs.h"

#include <cmath>

namespace baton::server {

using json = nlohmann::ordered_json;

namespace {

json bytesOf(const std::string& text) {
    json bytes = json::array();
    for (unsigned char c : text)
        bytes.push_back(int(c));
    return bytes;
}

} // namespace

void TokenLogprobs::add(const engine::Tokenizer& tok, int32_t token, float logprob,
                        const Alternatives& alternatives) {
    Entry e{tok.decode({token}), logprob, {}, m_offset};
    for (const auto& [id, lp] : alternatives)
        e.top.emplace_back(tok.decode({id}), lp);
    m_offset += int64_t(e.text.size());
    m_tokens.push_back(std::move(e));
}

json TokenLogprobs::content() const {
    json list = json::array();
    for (const Entry& e : m_tokens) {
        json top = json::array();
        for (const auto& [text, lp] : e.top)
            top.push_back({{"token", text}, {"logprob", lp}, {"bytes", bytesOf(text)}});
        list.push_back({{"token", e.text},
                        {"logprob", e.logprob},
                        {"bytes", bytesOf(e.text)},
                        {"top_logprobs", top}});
    }
    return list;
}

json TokenLogprobs::legacy() const {
    json tokens = json::array(), logprobs = json::array(), top = json::array(),
         offsets = json::array();
    for (const Entry& e : m_tokens) {
        json byText = json::object();
        for (const auto& [text, lp] : e.top)
            byText[text] = lp;
        tokens.push_back(e.text);
        logprobs.push_back(e.logprob);
        top.push_back(byText);
        offsets.push_back(e.offset);
    }
    return {{"tokens", tokens},
            {"token_logprobs", logprobs},
            {"top_logprobs", top},
            {"text_offset", offsets}};
}

json TokenLogprobs::kobold() const {
    json out = {{"content", content()}};
    const json fields = legacy();
    for (const auto& [key, value] : fields.items())
        out[key] = value;
    return out;
}

json llamaTokenProbabilities(const engine::Tokenizer& tok, const engine::GenerationEvent& e,
                             bool probs) {
    const std::string text = tok.decode({e.token});
    json top = json::array();
    for (const auto& [id, lp] : e.topLogprobs) {
        const std::string t = tok.decode({id});
        json item = {{"id", id}, {"token", t}, {"bytes", bytesOf(t)}};
        if (probs)
            item["prob"] = std::exp(lp);
        else
            item["logprob"] = lp;
        top.push_back(item);
    }
    json out = {{"id", e.token}, {"token", text}, {"bytes", bytesOf(text)}};
    if (probs) {
        out["prob"] = std::exp(e.logprob);
        out["top_probs"] = top;
    } else {
        out["logprob"] = e.logprob;
        out["top_logprobs"] = top;
    }
    return out;
}

} // namespace baton::server
