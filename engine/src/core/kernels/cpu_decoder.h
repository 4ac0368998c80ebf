// The single-token decode step of GPT-2 on the CPU, written against raw pointers (no
// torch): matrix-vector products stream the weights (float32, 16-bit or 8-bit, see
// weight_matrix.h) once per token at close to memory bandwidth and accumulate in
// float32, with no per-operator overhead. It computes exactly
// what Gpt2Impl::forward computes for one token with a KV cache (tests check it);
// batched work (prefill, scoring, training) stays in LibTorch.
#pragma once

#include "kernels/weight_matrix.h"

#include <cstdint>
#include <vector>

namespace baton::engine::cpu {

struct LayerWeights {
    const float *ln1W, *ln1B;
    MatrixView attnW;   // [3k, k]
    const float* attnB; // [3k]
    MatrixView projW;   // [k, k]
    const float* projB; // [k]
    const float *ln2W, *ln2B;
    MatrixView fcW;       // [inner, k]
    const float* fcB;     // [inner]
    MatrixView fcProjW;   // [k, inner]
    const float* fcProjB; // [k]
};

struct DecoderWeights {
    int nLayer = 0, nHead = 0, nEmbd = 0, nInner = 0, vocab = 0;
    float eps = 1e-5f;
    MatrixView wte;             // [vocab, k], also the LM head
    const float* wpe = nullptr; // [positions, k]
    const float *lnfW = nullptr, *lnfB = nullptr;
    std::vector<LayerWeights> layers;
};

// The KV cache as KvCache lays it out for batch 1: per layer [H, stride, D] with the
// first `slots` indices reserved for the state slots and tokens after them.
struct CacheView {
    std::vector<float*> k, v;
    int64_t stride = 0;
    int64_t slots = 1;               // reserved indices in front of the tokens
    int slotLayer = -1;              // first layer whose reserved indices hold a state, -1 for none
    int slotLayers = 1;              // layers from slotLayer on that hold it
    const float* slotBias = nullptr; // [H] added to the slots' attention logits, or null
    const float* sink = nullptr;     // [H] attention sink logits beside the slots, or null
};

class Decoder {
public:
    explicit Decoder(DecoderWeights weights);

    // Runs one token at window position `past` (the number of tokens already
    // cached), writes its key and value to the cache, and leaves the final hidden
    // state (after ln_f) in hiddenOut [k]. When layerWeights [L] and pooled are
    // given, adds sum_l w_l h^(l) to pooled [k]. slotMass, when given, receives the
    // attention probability on the slots averaged over heads (0 without a state).
    void step(int32_t token, int64_t past, const CacheView& cache, const float* layerWeights,
              float* pooled, float* hiddenOut, float* slotMass = nullptr);
    // logits [vocab] = wte · hidden
    void lmHead(const float* hidden, float* logits) const;

    const DecoderWeights& weights() const { return m_w; }

private:
    DecoderWeights m_w;
    std::vector<float> m_x, m_h, m_qkv, m_att, m_tmp, m_ff, m_scores, m_mass;
};

} // namespace baton::engine::cpu
