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
    // add_bos_token (as in Hugging Face's tokenizer_config.json and llama.cpp's GGUF):
    // whether a text is read after the start-of-text token. False for a model that
    // never saw one before its texts (Baton's scratch models, baton-mini): its first
    // token is then not predicted, instead of predicted from a token it never learnt.
    bool addBosToken = true;

    int headDim() const { return nHead > 0 ? nEmbd / nHead : 0; }
};

// The token a text starts with when it is read from its beginning (a story, a prompt):
// bos_token_id, else eos_token_id (GPT-2 uses one token for both); -1 when the model
// reads texts without one (addBosToken false) or has neither.
inline int startOfTextToken(const ModelConfig& config) {
    if (!config.addBosToken)
        return -1;
    return config.bosTokenId >= 0 ? config.bosTokenId : config.eosTokenId;
}
// What a generation from nothing (no text at all) starts from: the start-of-text token,
// or for a model that reads texts without one its end-of-text token, since the first
// token needs one to be predicted from; -1 when the model has neither.
inline int emptyStartToken(const ModelConfig& config) {
    return config.bosTokenId >= 0 ? config.bosTokenId : config.eosTokenId;
}

// Baton's recurrence module (../shared/docs/method.md section 2): the state h_prev,
// computed from the previous window, enters one block as an extra key and value.
struct RecurrenceConfig {
    int insertBlock = 1;   // 0-based block that receives the state (the paper's l_ins = 2)
    int ffnWidth = 200;    // hidden width of the feed-forward network
    int ffnDepth = 3;      // hidden layers (3 x 200: k->200->200->200->k)
    bool residual = true;  // h_prev = z + FFN(z), FFN's last layer zero-initialised;
                           // false is the paper's plain h_prev = FFN(z)
    bool slotBias = false; // a learned per-head logit bias on the state slot
    // Several state slots (ReadOnce's multi-vector state): the pooled region is cut
    // into `slots` equal segments, each pooled and passed through the FFN on its own,
    // plus a learned embedding per slot; each enters as its own key and value.
    int slots = 1;
    // Pool over the last poolLast positions of the window only (0: the whole window).
    int poolLast = 0;
    // A learned per-head attention sink at the insertion block (a logit with a zero
    // value, present together with the state), so that the state slot need not
    // absorb the attention that has nowhere else to go.
    bool sink = false;
    // Version 3 options (the designs of the recurrent-memory literature).
    // The state is read by `readBlocks` consecutive blocks from insertBlock on, each
    // applying its own ln_1 and c_attn to it (1: insertBlock only, the paper's).
    int readBlocks = 1;
    // How the next state is written: pooled from the window's hidden states (the
    // paper's), or by `slots` learned write tokens appended after the window's last
    // token (no position embedding; they attend to the whole window and to the state
    // it read), whose outputs after ln_f go through the FFN (RMT's written memory).
    bool writeTokens = false;
    // A learned gate between the previous state and the new one (per slot and
    // dimension): h_n = g * h_(n-1) + (1 - g) * candidate, g = sigmoid(W [h_(n-1);
    // candidate] + b), so that a state can keep what windows that do not mention it
    // would overwrite. The first window's state is the candidate.
    bool gate = false;
    // Version 4: the state read as memory tokens (RMT's read memory): its slots pass
    // through the reading blocks as tokens of their own (attending to each other, in
    // order, never to the window), and each reading block takes its keys and values
    // from the slots' pass through the blocks before it, not from the state itself.
    bool memoryTokens = false;
    int window = 0;  // T the module was trained with
    int overlap = 0; // o the module was trained with

    // Positions pooled in a window of T: the last poolLast, or all.
    int pooledPositions(int T) const { return poolLast > 0 && poolLast < T ? poolLast : T; }
    // Whether block `layer` reads the state.
    bool readsAt(int layer) const {
        return layer >= insertBlock && layer < insertBlock + readBlocks;
    }
    // The baton.json format version this module needs: 4 with memory tokens, 3 with
    // readBlocks > 1, write tokens or a gate, 2 with several slots, pooling of the last
    // positions or a sink, else 1.
    int formatVersion() const {
        if (memoryTokens)
            return 4;
        if (readBlocks != 1 || writeTokens || gate)
            return 3;
        return (slots != 1 || poolLast != 0 || sink) ? 2 : 1;
    }
};

// The module in words, as `baton-cli info` and the app show it: "trained at T = 128,
// o = 0; 4 state slots into block 1, residual FFN 3 x 200", plus any of ", pooled over
// the last K positions", ", slot logit bias", ", attention sink", ", read by blocks 1-3",
// ", written by write tokens", ", gated".
std::string describeRecurrence(const RecurrenceConfig& r);

// The newest version of recurrent checkpoints (baton.json) this build reads. A module
// is written with the lowest version that holds it (RecurrenceConfig::formatVersion):
// 1 without the version 2 options (slots, poolLast, sink), 2 without the version 3
// ones (readBlocks, writeTokens, gate).
constexpr int kRecurrentFormatVersion = 4;

// How an inference model holds its weights (--weights): float32, 16-bit floats, or
// 8-bit blocks made at load time (32 weights of a row share one float scale). On the
// CPU every format accumulates in float32 and only the weight matrices (attention,
// MLP, token embedding and LM head) change; norms, biases and position embeddings stay
// float32. On CUDA, f16 and bf16 are the compute dtype and int8 and q4 are not available.
enum class WeightFormat { F32, F16, BF16, Int8, Q4 };
const char* weightFormatName(WeightFormat format); // "f32", "f16", "bf16", "int8", "q4"
std::optional<WeightFormat> parseWeightFormat(const std::string& name);

struct ModelInfo {
    std::string path;    // the checkpoint folder
    std::string adapter; // the recurrence adapter folder loaded onto it ("" : none)
    ModelConfig config;
    int64_t parameterCount = 0; // distinct parameters (the tied LM head counted once)
    std::string storageDtype;   // what the file holds: "F32", "F16", "BF16" or "mixed"
    WeightFormat weights = WeightFormat::F32; // how the loaded model holds them
    int64_t mappedBytes = 0; // weights read in place from the mapped checkpoint (no copy)
    int64_t keptBytes = 0;   // converted weights mapped from an earlier load's (model.h)
    std::string device = "cpu";
    std::string tokenizerKind; // "gpt2-bpe" or "sentencepiece"
    int tokenizerVocabSize = 0;
    std::string identity; // content hash of the weights (and tokenizer): 16 hex digits
    std::optional<RecurrenceConfig> recurrence; // set for recurrent checkpoints
};

} // namespace baton::engine
