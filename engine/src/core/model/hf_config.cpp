#include "model/hf_config.h"

#include "util/files.h"
#include "util/json.h"

namespace baton::engine {

namespace {

Error bad(const std::string& path, const std::string& what) {
    return makeError(ErrorCode::BadConfig, path + ": " + what);
}

} // namespace

Result<void> validateModelConfig(const ModelConfig& c) {
    auto check = [](bool ok, const std::string& what) -> Result<void> {
        if (!ok)
            return makeError(ErrorCode::BadConfig, "invalid model configuration: " + what);
        return {};
    };
    for (auto r :
         {check(c.nLayer >= 1 && c.nLayer <= 256, "n_layer must be in [1, 256]"),
          check(c.nHead >= 1 && c.nHead <= 1024, "n_head must be in [1, 1024]"),
          check(c.nEmbd >= 1 && c.nEmbd <= 65536, "n_embd must be in [1, 65536]"),
          check(c.nPositions >= 1 && c.nPositions <= (1 << 20), "n_positions must be in [1, 2^20]"),
          check(c.vocabSize >= 1 && c.vocabSize <= (1 << 24), "vocab_size must be in [1, 2^24]"),
          check(c.nInner >= 1 && c.nInner <= (1 << 20), "n_inner must be in [1, 2^20]"),
          check(c.layerNormEps > 0 && c.layerNormEps < 1, "layer_norm_epsilon must be in (0, 1)"),
          check(c.nHead > 0 && c.nEmbd % c.nHead == 0, "n_embd must be a multiple of n_head")})
        if (!r)
            return r;
    return {};
}

Result<ModelConfig> parseHfConfig(std::string_view text, const std::string& path) {
    auto parsed = parseJson(text, path);
    if (!parsed)
        return parsed.error();
    const json::Json& j = *parsed;
    if (!j.is_object())
        return bad(path, "not a JSON object");
    if (j.contains("model_type") && j["model_type"] != "gpt2")
        return bad(path,
                   "model_type is " + j["model_type"].dump() + ", Baton runs GPT-2 (\"gpt2\")");

    ModelConfig c;
    json::FieldReader r(j);
    constexpr int64_t kMax = 1 << 24;
    r.integer("n_layer", 1, kMax, c.nLayer, r.Required);
    r.integer("n_head", 1, kMax, c.nHead, r.Required);
    r.integer("n_embd", 1, kMax, c.nEmbd, r.Required);
    // Older configs name the context n_ctx.
    if (!r.integer("n_positions", 1, kMax, c.nPositions))
        r.integer(j.contains("n_ctx") ? "n_ctx" : "n_positions", 1, kMax, c.nPositions, r.Required);
    r.integer("vocab_size", 1, kMax, c.vocabSize, r.Required);
    c.nInner = 4 * c.nEmbd;
    r.integer("n_inner", 1, kMax, c.nInner);
    r.number("layer_norm_epsilon", 0, 1, c.layerNormEps);
    if (!r.ok())
        return bad(path, r.error());
    if (j.contains("activation_function")) {
        const auto& act = j["activation_function"];
        if (act != "gelu_new" && act != "gelu_pytorch_tanh")
            return makeError(ErrorCode::Unsupported,
                             path + ": activation_function " + act.dump() +
                                 " is not supported (GPT-2 uses \"gelu_new\")");
    }
    auto requireFlag = [&](const char* key, bool expected) -> Result<void> {
        if (j.contains(key) && j[key].is_boolean() && j[key].get<bool>() != expected)
            return makeError(ErrorCode::Unsupported, path + ": " + key + " = " +
                                                         (expected ? "false" : "true") +
                                                         " is not supported");
        return {};
    };
    for (auto res :
         {requireFlag("scale_attn_weights", true),
          requireFlag("scale_attn_by_inverse_layer_idx", false),
          requireFlag("reorder_and_upcast_attn", false), requireFlag("tie_word_embeddings", true),
          requireFlag("add_cross_attention", false)})
        if (!res)
            return res.error();
    auto readTokenId = [&](const char* key, int& out) {
        if (j.contains(key) && j[key].is_number_integer())
            out = j[key].get<int>();
    };
    readTokenId("bos_token_id", c.bosTokenId);
    readTokenId("eos_token_id", c.eosTokenId);
    if (const auto it = j.find("add_bos_token"); it != j.end() && !it->is_null()) {
        if (!it->is_boolean())
            return makeError(ErrorCode::BadConfig, path + ": add_bos_token must be true or false");
        c.addBosToken = it->get<bool>();
    }
    if (auto r = validateModelConfig(c); !r)
        return makeError(ErrorCode::BadConfig, path + ": " + r.error().message);
    return c;
}

Result<ModelConfig> readHfConfig(const std::string& path) {
    auto text = files::readAll(path, size_t(16) << 20);
    if (!text)
        return text.error();
    return parseHfConfig(*text, path);
}

std::string hfConfigJson(const ModelConfig& c) {
    nlohmann::ordered_json j;
    j["architectures"] = {"GPT2LMHeadModel"};
    j["model_type"] = "gpt2";
    j["vocab_size"] = c.vocabSize;
    j["n_positions"] = c.nPositions;
    j["n_ctx"] = c.nPositions;
    j["n_embd"] = c.nEmbd;
    j["n_layer"] = c.nLayer;
    j["n_head"] = c.nHead;
    j["n_inner"] =
        c.nInner == 4 * c.nEmbd ? nlohmann::ordered_json() : nlohmann::ordered_json(c.nInner);
    j["activation_function"] = "gelu_new";
    j["layer_norm_epsilon"] = c.layerNormEps;
    if (c.bosTokenId >= 0)
        j["bos_token_id"] = c.bosTokenId;
    if (c.eosTokenId >= 0)
        j["eos_token_id"] = c.eosTokenId;
    if (!c.addBosToken)
        j["add_bos_token"] = false;
    j["tie_word_embeddings"] = true;
    j["torch_dtype"] = "float32";
    return j.dump(2) + "\n";
}

} // namespace baton::engine
