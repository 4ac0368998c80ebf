#include "inference/cpu_decoder.h"

#include "inference/worker_team.h"

// GCC 12 reports a false positive inside _mm512_reduce_add_ps.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>

namespace baton::engine::cpu {

namespace {

std::atomic<int> g_threads{1};

// ---- dot products over 4 rows at a time, three instruction-set variants ----

using RowsFn = void (*)(const float*, const float*, const float*, float*, int64_t, int64_t,
                        int64_t);

void rowsScalar(const float* W, const float* x, const float* b, float* y, int64_t r0, int64_t r1,
                int64_t cols) {
    for (int64_t r = r0; r < r1; ++r) {
        const float* w = W + r * cols;
        float s = 0.f;
        for (int64_t i = 0; i < cols; ++i)
            s += w[i] * x[i];
        y[r] = s + (b ? b[r] : 0.f);
    }
}

__attribute__((target("avx2,fma"))) inline float hsum256(__m256 v) {
    __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
    lo = _mm_add_ps(lo, hi);
    lo = _mm_hadd_ps(lo, lo);
    lo = _mm_hadd_ps(lo, lo);
    return _mm_cvtss_f32(lo);
}

__attribute__((target("avx2,fma"))) void rowsAvx2(const float* W, const float* x, const float* b,
                                                  float* y, int64_t r0, int64_t r1, int64_t cols) {
    int64_t r = r0;
    for (; r + 4 <= r1; r += 4) {
        const float* w0 = W + r * cols;
        const float *w1 = w0 + cols, *w2 = w1 + cols, *w3 = w2 + cols;
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(),
               a3 = _mm256_setzero_ps();
        int64_t i = 0;
        for (; i + 8 <= cols; i += 8) {
            const __m256 xv = _mm256_loadu_ps(x + i);
            a0 = _mm256_fmadd_ps(_mm256_loadu_ps(w0 + i), xv, a0);
            a1 = _mm256_fmadd_ps(_mm256_loadu_ps(w1 + i), xv, a1);
            a2 = _mm256_fmadd_ps(_mm256_loadu_ps(w2 + i), xv, a2);
            a3 = _mm256_fmadd_ps(_mm256_loadu_ps(w3 + i), xv, a3);
        }
        float s0 = hsum256(a0), s1 = hsum256(a1), s2 = hsum256(a2), s3 = hsum256(a3);
        for (; i < cols; ++i) {
            s0 += w0[i] * x[i];
            s1 += w1[i] * x[i];
            s2 += w2[i] * x[i];
            s3 += w3[i] * x[i];
        }
        y[r] = s0 + (b ? b[r] : 0.f);
        y[r + 1] = s1 + (b ? b[r + 1] : 0.f);
        y[r + 2] = s2 + (b ? b[r + 2] : 0.f);
        y[r + 3] = s3 + (b ? b[r + 3] : 0.f);
    }
    rowsScalar(W, x, b, y, r, r1, cols);
}

__attribute__((target("avx512f"))) void rowsAvx512(const float* W, const float* x, const float* b,
                                                   float* y, int64_t r0, int64_t r1, int64_t cols) {
    int64_t r = r0;
    for (; r + 4 <= r1; r += 4) {
        const float* w0 = W + r * cols;
        const float *w1 = w0 + cols, *w2 = w1 + cols, *w3 = w2 + cols;
        __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(),
               a3 = _mm512_setzero_ps();
        int64_t i = 0;
        for (; i + 16 <= cols; i += 16) {
            const __m512 xv = _mm512_loadu_ps(x + i);
            a0 = _mm512_fmadd_ps(_mm512_loadu_ps(w0 + i), xv, a0);
            a1 = _mm512_fmadd_ps(_mm512_loadu_ps(w1 + i), xv, a1);
            a2 = _mm512_fmadd_ps(_mm512_loadu_ps(w2 + i), xv, a2);
            a3 = _mm512_fmadd_ps(_mm512_loadu_ps(w3 + i), xv, a3);
        }
        float s0 = _mm512_reduce_add_ps(a0), s1 = _mm512_reduce_add_ps(a1),
              s2 = _mm512_reduce_add_ps(a2), s3 = _mm512_reduce_add_ps(a3);
        for (; i < cols; ++i) {
            s0 += w0[i] * x[i];
            s1 += w1[i] * x[i];
            s2 += w2[i] * x[i];
            s3 += w3[i] * x[i];
        }
        y[r] = s0 + (b ? b[r] : 0.f);
        y[r + 1] = s1 + (b ? b[r + 1] : 0.f);
        y[r + 2] = s2 + (b ? b[r + 2] : 0.f);
        y[r + 3] = s3 + (b ? b[r + 3] : 0.f);
    }
    rowsScalar(W, x, b, y, r, r1, cols);
}

// y += a * x over n floats.
using AxpyFn = void (*)(float*, const float*, float, int64_t);

void axpyScalar(float* y, const float* x, float a, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
        y[i] += a * x[i];
}

__attribute__((target("avx2,fma"))) void axpyAvx2(float* y, const float* x, float a, int64_t n) {
    const __m256 av = _mm256_set1_ps(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i,
                         _mm256_fmadd_ps(av, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    axpyScalar(y + i, x + i, a, n - i);
}

__attribute__((target("avx512f"))) void axpyAvx512(float* y, const float* x, float a, int64_t n) {
    const __m512 av = _mm512_set1_ps(a);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i,
                         _mm512_fmadd_ps(av, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
    axpyScalar(y + i, x + i, a, n - i);
}

AxpyFn pickAxpy() {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return axpyAvx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return axpyAvx2;
    return axpyScalar;
}

const AxpyFn g_axpy = pickAxpy();

RowsFn pickRows() {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return rowsAvx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return rowsAvx2;
    return rowsScalar;
}

const RowsFn g_rows = pickRows();

} // namespace

void setThreadCount(int threads) {
    g_threads = std::max(1, threads);
}
int threadCount() {
    return g_threads;
}

void gemv(const float* W, const float* x, const float* b, float* y, int64_t rows, int64_t cols) {
    const int threads = (rows * cols >= 65536) ? g_threads.load() : 1;
    if (threads <= 1) {
        g_rows(W, x, b, y, 0, rows, cols);
        return;
    }
    runParts(threads, [&](int t, int nt) {
        // Contiguous ranges whose starts are multiples of 4 rows; each row is computed
        // by one thread, so the result does not depend on the team size.
        const int64_t blocks = (rows + 3) / 4;
        const int64_t b0 = blocks * t / nt, b1 = blocks * (t + 1) / nt;
        g_rows(W, x, b, y, b0 * 4, std::min(rows, b1 * 4), cols);
    });
}

void layerNorm(const float* x, const float* gamma, const float* beta, float* y, int64_t n,
               float eps) {
    double mean = 0;
    for (int64_t i = 0; i < n; ++i)
        mean += x[i];
    mean /= double(n);
    double var = 0;
    for (int64_t i = 0; i < n; ++i) {
        const double d = x[i] - mean;
        var += d * d;
    }
    var /= double(n);
    const float inv = static_cast<float>(1.0 / std::sqrt(var + eps));
    const float m = static_cast<float>(mean);
    for (int64_t i = 0; i < n; ++i)
        y[i] = (x[i] - m) * inv * gamma[i] + beta[i];
}

void geluTanh(float* x, int64_t n) {
    constexpr float kC = 0.7978845608028654f; // sqrt(2 / pi)
    for (int64_t i = 0; i < n; ++i) {
        const float v = x[i];
        x[i] = 0.5f * v * (1.f + std::tanh(kC * (v + 0.044715f * v * v * v)));
    }
}

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
    const float* te = m_w.wte + int64_t(token) * k;
    const float* pe = m_w.wpe + past * k;
    for (int i = 0; i < k; ++i)
        x[i] = te[i] + pe[i];
    if (slotMass)
        *slotMass = 0.f;

    for (int l = 0; l < L; ++l) {
        const LayerWeights& w = m_w.layers[static_cast<size_t>(l)];
        layerNorm(x, w.ln1W, w.ln1B, m_h.data(), k, m_w.eps);
        gemv(w.attnW, m_h.data(), w.attnB, m_qkv.data(), 3 * k, k);
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
        const bool hasState = cache.slotLayer == l;
        const int64_t first = hasState ? 0 : S;
        const int64_t slots = hasState ? S : 0;
        const int64_t count = S + past + 1 - first; // keys visible to this query
        m_scores.resize(static_cast<size_t>(H * count));
        m_mass.assign(static_cast<size_t>(H), 0.f);
        const int threads = (int64_t(H) * count * D >= 32768) ? g_threads.load() : 1;
        const auto head = [&](int h) {
            const float* qh = q + h * D;
            const float* Kh = K + (h * cache.stride + first) * D;
            const float* Vh = V + (h * cache.stride + first) * D;
            float* s = m_scores.data() + h * count;
            g_rows(Kh, qh, nullptr, s, 0, count, D); // s[j] = K_j . q
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
                g_axpy(o, Vh + j * D, s[j] * inv, D);
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
        gemv(w.projW, m_att.data(), w.projB, m_tmp.data(), k, k);
        for (int i = 0; i < k; ++i)
            x[i] += m_tmp[i];

        layerNorm(x, w.ln2W, w.ln2B, m_h.data(), k, m_w.eps);
        gemv(w.fcW, m_h.data(), w.fcB, m_ff.data(), m_w.nInner, k);
        geluTanh(m_ff.data(), m_w.nInner);
        gemv(w.fcProjW, m_ff.data(), w.fcProjB, m_tmp.data(), k, m_w.nInner);
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
    gemv(m_w.wte, hidden, nullptr, logits, m_w.vocab, m_w.nEmbd);
}

} // namespace baton::engine::cpu
