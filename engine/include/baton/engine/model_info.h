// Plain value types that describe a loaded model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace baton::engine {

// The GPT-2 hyper-parameters of a checkpoint (Hugging Face config.json names in comments).
struct ModelConfig {
    int nLayer = 0;             // n_layer
    int nHead = 0;              // n_head
    int nEmbd = 0;              // n_embd
    int nPositions = 0;         // n_positions
    int vocabSize = 0;          // vocab_size
    int nInner = 0;             // n_inner (null in config.json means 4 * n_embd)
    double layerNormEps = 1e-5; // layer_norm_epsilon
    int bosTokenId = -1;        // bos_token_id, -1 if none
    int eosTokenId = -1;        // eos_token_id, -1 if none

    int headDim() const { return nHead > 0 ? nEmbd / nHead : 0; }
};

enum class ComputeDtype { Float32, BFloat16 };
const char* computeDtypeName(ComputeDtype dtype); // "f32" / "bf16"

struct ModelInfo {
    std::string path; // the checkpoint folder
    ModelConfig config;
    int64_t parameterCount = 0; // distinct parameters (the tied LM head counted once)
    std::string storageDtype;   // what the file holds: "F32", "F16", "BF16" or "mixed"
    ComputeDtype computeDtype = ComputeDtype::Float32;
    std::string device = "cpu";
    std::string tokenizerKind; // "gpt2-bpe" or "sentencepiece"
    int tokenizerVocabSize = 0;
    std::string identity; // content hash of the weights (and tokenizer): 16 hex digits
};

} // namespace baton::engine
