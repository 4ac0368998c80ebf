#include "openai_answer.h"

#include "http_json.h"

namespace baton::server {

using json = nlohmann::ordered_json;

OpenAiAnswer::OpenAiAnswer(const char* idPrefix, std::string modelName, int n)
    : id(randomId(idPrefix))
    , created(unixTime())
    , model(std::move(modelName))
    , logprobs(size_t(n)) {}

std::string OpenAiAnswer::chunk(const char* object, const json& choice) const {
    json c = {{"id", id},
              {"object", object},
              {"created", created},
              {"model", model},
              {"choices", json::array({choice})}};
    if (streamUsage)
        c["usage"] = nullptr;
    return "data: " + dumpJson(c) + "\n\n";
}

json OpenAiAnswer::usage() const {
    return {{"prompt_tokens", promptTokens},
            {"completion_tokens", completionTokens},
            {"total_tokens", promptTokens + completionTokens},
            {"prompt_tokens_details", {{"cached_tokens", cachedTokens}}}};
}

std::string OpenAiAnswer::finishStream(const char* object) const {
    std::string out;
    if (streamUsage && error.empty())
        out = "data: " +
              dumpJson({{"id", id},
                        {"object", object},
                        {"created", created},
                        {"model", model},
                        {"choices", json::array()},
                        {"usage", usage()}}) +
              "\n\n";
    return out + "data: [DONE]\n\n";
}

void OpenAiAnswer::count(const CompletionResult& r) {
    promptTokens = r.promptTokens;
    cachedTokens += r.reusedTokens;
    completionTokens += int64_t(r.generation.tokens.size());
}

std::string OpenAiAnswer::finish(const char* object) const {
    if (!error.empty())
        return dumpJson(errorJson(500, error));
    return dumpJson({{"id", id},
                     {"object", object},
                     {"created", created},
                     {"model", model},
                     {"choices", choices},
                     {"usage", usage()}});
}

std::vector<CompletionRequest> choiceRequests(const CompletionRequest& request, int n) {
    std::vector<CompletionRequest> out(size_t(n), request);
    for (int i = 0; i < n; ++i)
        out[size_t(i)].sampling.seed += uint64_t(i);
    return out;
}

} // namespace baton::server
