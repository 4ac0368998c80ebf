#include "model/hf_config.h"

#include "util/files.h"
#include "util/utf8.h"

#include <nlohmann/json.hpp>

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
    if (const size_t bad = utf8::firstInvalid(text); bad != std::string_view::npos)
        return makeError(ErrorCode::InvalidUtf8,
                         path + " is not valid UTF-8 (byte " + std::to_string(bad) + ")");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        return makeError(ErrorCode::InvalidJson, path + " is not valid JSON: " + e.what());
    }
    if (!j.is_object())
        return bad(path, "not a JSON object");
    if (j.contains("model_type") && j["model_type"] != "gpt2")
        return bad(path,
                   "model_type is " + j["model_type"].dump() + ", Baton runs GPT-2 (\"gpt2\")");

    ModelConfig c;
    auto readInt = [&](const char* key, const char* fallbackKey, int& out) -> Result<void> {
        const nlohmann::json* v = nullptr;
        if (j.contains(key) && !j[key].is_null())
            v = &j[key];
        else if (fallbackKey && j.contains(fallbackKey) && !j[fallbackKey].is_null())
            v = &j[fallbackKey];
        if (!v)
            return bad(path, std::string("missing ") + key);
        if (!v->is_number_integer() || v->get<int64_t>() < 1 || v->get<int64_t>() > (1 << 24))
            return bad(path, std::string(key) + " must be a positive integer, not " + v->dump());
        out = v->get<int>();
        return {};
    };
    for (auto r :
         {readInt("n_layer", nullptr, c.nLayer), readInt("n_head", nullptr, c.nHead),
          readInt("n_embd", nullptr, c.nEmbd), readInt("n_positions", "n_ctx", c.nPositions),
          readInt("vocab_size", nullptr, c.vocabSize)})
        if (!r)
            return r.error();
    c.nInner = 4 * c.nEmbd;
    if (j.contains("n_inner") && !j["n_inner"].is_null())
        if (auto r = readInt("n_inner", nullptr, c.nInner); !r)
            return r.error();
    if (j.contains("layer_norm_epsilon")) {
        if (!j["layer_norm_epsilon"].is_number())
            return bad(path, "layer_norm_epsilon must be a number");
        c.layerNormEps = j["layer_norm_epsilon"].get<double>();
    }
    if (j.contains("activation_function")) {
        const auto act = j["activation_function"];
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
    for (auto r :
         {requireFlag("scale_attn_weights", true),
          requireFlag("scale_attn_by_inverse_layer_idx", false),
          requireFlag("reorder_and_upcast_attn", false), requireFlag("tie_word_embeddings", true),
          requireFlag("add_cross_attention", false)})
        if (!r)
            return r.error();
    auto readTokenId = [&](const char* key, int& out) {
        if (j.contains(key) && j[key].is_number_integer())
            out = j[key].get<int>();
    };
    readTokenId("bos_token_id", c.bosTokenId);
    readTokenId("eos_token_id", c.eosTokenId);
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
    j["tie_word_embeddings"] = true;
    j["torch_dtype"] = "float32";
    return j.dump(2) + "\n";
}

} // namespace baton::engine
