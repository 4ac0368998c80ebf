#include "kernels/cpu_decoder.h"

#include "kernels/vector_ops.h"
#include "kernels/worker_team.h"

#include <algorithm>
#include <cmath>

namespace baton::engine::cpu {

Decoder::Decoder(DecoderWeights weights)
    : m_w(std::move(weights)) {
    const int k = m_w.nEmbd;
    m_x.resize(k);
    m_h.resize(k);
    m_qkv.resize(3 * k);
    m_att.resize(k);
    m_tmp.resize(k);
    m_ff.resize(m_w.nInner);
}

void Decoder::step(int32_t token, int64_t past, const CacheView& cache, const float* layerWeights,
                   float* pooled, float* hiddenOut, float* slotMass) {
    const int k = m_w.nEmbd, H = m_w.nHead, D = k / H, L = m_w.nLayer;
    const float scale = 1.f / std::sqrt(static_cast<float>(D));
    float* x = m_x.data();
    unpackRows(m_w.wte, token, token + 1, x);
    const float* pe = m_w.wpe + past * k;
    for (int i = 0; i < k; ++i)
        x[i] += pe[i];
    if (slotMass)
        *slotMass = 0.f;

    for (int l = 0; l < L; ++l) {
        const LayerWeights& w = m_w.layers[static_cast<size_t>(l)];
        layerNorm(x, w.ln1W, w.ln1B, m_h.data(), k, m_w.eps);
        gemv(w.attnW, m_h.data(), w.attnB, m_qkv.data());
        const float* q = m_qkv.data();
        const float* kNew = q + k;
        const float* vNew = q + 2 * k;
        float* K = cache.k[static_cast<size_t>(l)];
        float* V = cache.v[static_cast<size_t>(l)];
        const int64_t S = cache.slots;
        for (int h = 0; h < H; ++h) {
            std::copy(kNew + h * D, kNew + (h + 1) * D, K + (h * cache.stride + S + past) * D);
            std::copy(vNew + h * D, vNew + (h + 1) * D, V + (h * cache.stride + S + past) * D);
        }
        const bool hasState =
            cache.slotLayer >= 0 && l >= cache.slotLayer && l < cache.slotLayer + cache.slotLayers;
        const int64_t first = hasState ? 0 : S;
        const int64_t slots = hasState ? S : 0;
        const int64_t count = S + past + 1 - first; // keys visible to this query
        m_scores.resize(static_cast<size_t>(H * count));
        m_mass.assign(static_cast<size_t>(H), 0.f);
        const int threads = (int64_t(H) * count * D >= 32768) ? threadCount() : 1;
        const auto head = [&](int h) {
            const float* qh = q + h * D;
            const float* Kh = K + (h * cache.stride + first) * D;
            const float* Vh = V + (h * cache.stride + first) * D;
            float* s = m_scores.data() + h * count;
            gemvRows(PackedMatrix::wrap(Kh, count, D), qh, nullptr, s, 0, count); // s[j] = K_j . q
            float mx = -INFINITY;
            for (int64_t j = 0; j < count; ++j) {
                s[j] *= scale;
                if (j < slots && cache.slotBias)
                    s[j] += cache.slotBias[h];
                mx = std::max(mx, s[j]);
            }
            const bool sink = slots > 0 && cache.sink;
            if (sink)
                mx = std::max(mx, cache.sink[h]);
            float sum = sink ? std::exp(cache.sink[h] - mx) : 0.f;
            for (int64_t j = 0; j < count; ++j) {
                s[j] = std::exp(s[j] - mx);
                sum += s[j];
            }
            const float inv = 1.f / sum;
            float* o = m_att.data() + h * D;
            std::fill(o, o + D, 0.f);
            for (int64_t j = 0; j < count; ++j)
                axpy(o, Vh + j * D, s[j] * inv, D);
            float mass = 0.f;
            for (int64_t j = 0; j < slots; ++j)
                mass += s[j] * inv;
            m_mass[static_cast<size_t>(h)] = mass;
        };
        runParts(threads, [&](int t, int nt) { // heads split into contiguous ranges
            for (int h = H * t / nt; h < H * (t + 1) / nt; ++h)
                head(h);
        });
        if (slotMass && hasState) {
            float massSum = 0.f;
            for (float m : m_mass)
                massSum += m;
            *slotMass = massSum / float(H);
        }
        gemv(w.projW, m_att.data(), w.projB, m_tmp.data());
        for (int i = 0; i < k; ++i)
            x[i] += m_tmp[i];

        layerNorm(x, w.ln2W, w.ln2B, m_h.data(), k, m_w.eps);
        gemv(w.fcW, m_h.data(), w.fcB, m_ff.data(), geluTanh); // GELU by each row's thread
        gemv(w.fcProjW, m_ff.data(), w.fcProjB, m_tmp.data());
        for (int i = 0; i < k; ++i)
            x[i] += m_tmp[i];

        const float* hl = x;
        if (l == L - 1) {
            layerNorm(x, m_w.lnfW, m_w.lnfB, hiddenOut, k, m_w.eps);
            hl = hiddenOut;
        }
        if (layerWeights && pooled)
            for (int i = 0; i < k; ++i)
                pooled[i] += layerWeights[l] * hl[i];
    }
}

void Decoder::lmHead(const float* hidden, float* logits) const {
    gemv(m_w.wte, hidden, nullptr, logits);
}

} // namespace baton::engine::cpu
