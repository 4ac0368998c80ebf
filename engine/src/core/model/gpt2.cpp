#include "model/gpt2.h"

#include "kernels/batched_products.h"
#include "model/fixed_blocks.h"

#include <torch/nn/functional/activation.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>

namespace baton::engine {

// Parameters are created uninitialised (torch::empty): they are always either
// loaded from a checkpoint or initialised by initialiseForTraining().

torch::Tensor PackableWeight::dense() const {
    if (!packed)
        return weight;
    // A column-major matrix unpacks as the [cols, rows] matrix it stores, then is
    // seen transposed: the products read it so at no cost.
    const cpu::MatrixView v = packed->view().stored();
    auto out = torch::empty({v.rows, v.cols}, torch::kFloat32);
    cpu::unpackRows(v, 0, v.rows, out.data_ptr<float>());
    return packed->view().transposed ? out.t() : out;
}

cpu::MatrixView PackableWeight::view() const {
    if (packed)
        return packed->view();
    const auto v = blocks::heldView(weight);
    TORCH_CHECK(v.has_value(), "a weight matrix in an unknown layout");
    return *v;
}

torch::Tensor PackableWeight::multiply(const torch::Tensor& x, const torch::Tensor& bias) const {
    if (packed && cpu::batchedProducts(packed->view().format) && blocks::ownKernels(x) &&
        !(torch::GradMode::is_enabled() && x.requires_grad()))
        return blocks::packedLinear(x, packed->view(), bias);
    return blocks::linear(x, dense(), bias);
}

void PackableWeight::pack(WeightFormat format) {
    if (format == WeightFormat::F32 || packed)
        return;
    torch::NoGradGuard noGrad;
    const auto w = weight.to(torch::kCPU, torch::kFloat32).contiguous();
    packed = std::make_shared<const cpu::PackedMatrix>(
        cpu::PackedMatrix::pack(w.data_ptr<float>(), w.size(0), w.size(1), format));
    // The registered parameter shares this tensor's storage: emptying it in place
    // frees the float32 weights.
    weight.set_();
}

AffineImpl::AffineImpl(int64_t in, int64_t out) {
    weight = register_parameter("weight", torch::empty({out, in}));
    bias = register_parameter("bias", torch::empty({out}));
}

torch::Tensor AffineImpl::forward(const torch::Tensor& x) const {
    return multiply(x, bias);
}

TableImpl::TableImpl(int64_t rows, int64_t dim) {
    weight = register_parameter("weight", torch::empty({rows, dim}));
}

torch::Tensor TableImpl::forward(const torch::Tensor& ids) const {
    if (!packed)
        return torch::embedding(weight, ids);
    // Only the rows asked for.
    const auto flat = ids.to(torch::kCPU, torch::kLong).contiguous().view(-1);
    const cpu::MatrixView v = packed->view();
    auto out = torch::empty({flat.numel(), v.cols}, torch::kFloat32);
    const int64_t* id = flat.data_ptr<int64_t>();
    for (int64_t i = 0; i < flat.numel(); ++i) {
        TORCH_CHECK(id[i] >= 0 && id[i] < v.rows, "token id out of range");
        cpu::unpackRows(v, id[i], id[i] + 1, out.data_ptr<float>() + i * v.cols);
    }
    auto shape = ids.sizes().vec();
    shape.push_back(v.cols);
    return out.view(shape).to(ids.device());
}

NormImpl::NormImpl(int64_t size, double eps_)
    : eps(eps_) {
    weight = register_parameter("weight", torch::empty({size}));
    bias = register_parameter("bias", torch::empty({size}));
}

torch::Tensor NormImpl::forward(const torch::Tensor& x) const {
    return blocks::layerNorm(x, weight, bias, eps);
}

AttentionImpl::AttentionImpl(const ModelConfig& c) {
    c_attn = register_module("c_attn", Affine(c.nEmbd, 3 * c.nEmbd));
    c_proj = register_module("c_proj", Affine(c.nEmbd, c.nEmbd));
}

MlpImpl::MlpImpl(const ModelConfig& c) {
    c_fc = register_module("c_fc", Affine(c.nEmbd, c.nInner));
    c_proj = register_module("c_proj", Affine(c.nInner, c.nEmbd));
}

BlockImpl::BlockImpl(const ModelConfig& c) {
    ln_1 = register_module("ln_1", Norm(c.nEmbd, c.layerNormEps));
    attn = register_module("attn", Attention(c));
    ln_2 = register_module("ln_2", Norm(c.nEmbd, c.layerNormEps));
    mlp = register_module("mlp", Mlp(c));
}

void KvCache::allocate(const ModelConfig& c, int64_t batch, int64_t cap, torch::ScalarType dtype,
                       torch::Device device, int64_t reserved) {
    const auto options = torch::TensorOptions().dtype(dtype).device(device);
    k.clear();
    v.clear();
    for (int l = 0; l < c.nLayer; ++l) {
        k.push_back(torch::zeros({batch, c.nHead, reserved + cap, c.headDim()}, options));
        v.push_back(torch::zeros({batch, c.nHead, reserved + cap, c.headDim()}, options));
    }
    capacity = cap;
    slots = reserved;
    clear();
}

Gpt2Impl::Gpt2Impl(const ModelConfig& config)
    : m_config(config) {
    wte = register_module("wte", Table(config.vocabSize, config.nEmbd));
    wpe = register_module("wpe", Table(config.nPositions, config.nEmbd));
    auto h = register_module("h", std::make_shared<torch::nn::Module>());
    for (int l = 0; l < config.nLayer; ++l)
        blocks.push_back(h->register_module(std::to_string(l), Block(config)));
    ln_f = register_module("ln_f", Norm(config.nEmbd, config.layerNormEps));
}

void Gpt2Impl::initialiseForTraining() {
    torch::NoGradGuard noGrad;
    const double std = 0.02;
    const double residualStd = std / std::sqrt(2.0 * m_config.nLayer);
    wte->weight.normal_(0, std);
    wpe->weight.normal_(0, 0.01);
    for (auto& b : blocks) {
        for (Norm n : {b->ln_1, b->ln_2}) {
            n->weight.fill_(1);
            n->bias.zero_();
        }
        for (Affine a : {b->attn->c_attn, b->mlp->c_fc}) {
            a->weight.normal_(0, std);
            a->bias.zero_();
        }
        for (Affine a : {b->attn->c_proj, b->mlp->c_proj}) {
            a->weight.normal_(0, residualStd);
            a->bias.zero_();
        }
    }
    ln_f->weight.fill_(1);
    ln_f->bias.zero_();
}

torch::Tensor Gpt2Impl::logits(const torch::Tensor& hidden) const {
    return wte->multiply(hidden, {});
}

std::vector<std::pair<std::string, PackableWeight*>> Gpt2Impl::packableWeights() {
    std::vector<std::pair<std::string, PackableWeight*>> out = {{"wte.weight", wte.get()}};
    for (size_t l = 0; l < blocks.size(); ++l) {
        const std::string p = "h." + std::to_string(l) + ".";
        auto& b = blocks[l];
        out.emplace_back(p + "attn.c_attn.weight", b->attn->c_attn.get());
        out.emplace_back(p + "attn.c_proj.weight", b->attn->c_proj.get());
        out.emplace_back(p + "mlp.c_fc.weight", b->mlp->c_fc.get());
        out.emplace_back(p + "mlp.c_proj.weight", b->mlp->c_proj.get());
    }
    return out;
}

void Gpt2Impl::packWeights(WeightFormat format) {
    for (auto& [name, w] : packableWeights())
        w->pack(format);
}

int64_t Gpt2Impl::parameterCount() {
    int64_t n = 0;
    for (const auto& p : parameters())
        n += p.numel();
    for (auto& [name, w] : packableWeights())
        if (w->packed)
            n += w->packed->view().rows * w->packed->view().cols;
    return n;
}

bool Gpt2Impl::packed() const {
    return wte->packed != nullptr;
}

std::pair<torch::Tensor, torch::Tensor> Gpt2Impl::slotKeyValue(const torch::Tensor& state,
                                                               int layer) {
    // The state slots enter block `layer` as extra keys and values: that block's ln_1
    // and c_attn are applied to them (no position embedding) and the queries dropped.
    const auto& block = blocks[static_cast<size_t>(layer)];
    const int64_t batch = state.size(0), S = state.size(1), H = m_config.nHead,
                  D = m_config.headDim();
    const auto kv = block->attn->c_attn->forward(block->ln_1->forward(state)); // [B, S, 3k]
    const auto parts = kv.split(m_config.nEmbd, -1);
    auto slotK = parts[1].reshape({batch, S, H, D}).transpose(1, 2);
    auto slotV = parts[2].reshape({batch, S, H, D}).transpose(1, 2);
    return std::make_pair(slotK, slotV);
}

std::vector<std::pair<torch::Tensor, torch::Tensor>>
Gpt2Impl::slotKeyValues(const torch::Tensor& state, int first, int count, bool memoryTokens) {
    std::vector<std::pair<torch::Tensor, torch::Tensor>> out;
    torch::Tensor slots = state;
    for (int l = first; l < first + count; ++l) {
        out.push_back(slotKeyValue(slots, l));
        if (memoryTokens && l + 1 < first + count)
            slots = memoryBlock(slots, l);
    }
    return out;
}

torch::Tensor Gpt2Impl::memoryBlock(const torch::Tensor& slots, int layer) {
    const auto& block = blocks[static_cast<size_t>(layer)];
    const auto none = torch::Tensor();
    auto x = slots + attention(layer, block->ln_1->forward(slots), nullptr, 0, none, none, none,
                               none, nullptr);
    return x + block->mlp->c_proj->forward(
                   blocks::geluTanh(block->mlp->c_fc->forward(block->ln_2->forward(x))));
}

torch::Tensor Gpt2Impl::attention(int layer, const torch::Tensor& x, KvCache* cache, int64_t past,
                                  const torch::Tensor& slotK, const torch::Tensor& slotV,
                                  const torch::Tensor& slotBias, const torch::Tensor& sink,
                                  torch::Tensor* slotMass) {
    const auto& attn = blocks[static_cast<size_t>(layer)]->attn;
    const int64_t B = x.size(0), n = x.size(1), H = m_config.nHead, D = m_config.headDim();
    const auto qkv = attn->c_attn->forward(x).split(m_config.nEmbd, -1);
    const auto q = qkv[0].view({B, n, H, D}).transpose(1, 2);
    auto k = qkv[1].view({B, n, H, D}).transpose(1, 2);
    auto v = qkv[2].view({B, n, H, D}).transpose(1, 2);

    int64_t slots = 0; // state slots in front of the keys
    torch::Tensor keys, values;
    if (cache != nullptr) {
        const int64_t reserved = cache->slots;
        cache->k[layer].narrow(2, reserved + past, n).copy_(k);
        cache->v[layer].narrow(2, reserved + past, n).copy_(v);
        slots = cache->holdsState(layer) ? reserved : 0;
        const int64_t first = reserved - slots;
        keys = cache->k[layer].narrow(2, first, reserved + past + n - first);
        values = cache->v[layer].narrow(2, first, reserved + past + n - first);
    } else if (slotK.defined()) {
        slots = slotK.size(2);
        keys = torch::cat(std::vector<torch::Tensor>{slotK, k}, 2);
        values = torch::cat(std::vector<torch::Tensor>{slotV, v}, 2);
    } else {
        keys = k;
        values = v;
    }

    auto scores = blocks::matmul(q, keys.transpose(-1, -2)) * (1.0 / std::sqrt(double(D)));
    if (slots > 0 && slotBias.defined()) {
        const int64_t lk = scores.size(3);
        scores = torch::cat(
            std::vector<torch::Tensor>{scores.narrow(3, 0, slots) + slotBias.view({1, H, 1, 1}),
                                       scores.narrow(3, slots, lk - slots)},
            3);
    }
    if (n > 1) {
        // Query i (token position past + i) sees tokens 0..past+i and the slots.
        const int64_t lk = keys.size(2);
        const auto opts = torch::TensorOptions().dtype(torch::kLong).device(x.device());
        auto keyPos = torch::arange(lk, opts) - slots;
        auto queryPos = torch::arange(n, opts) + past;
        auto masked = keyPos.unsqueeze(0) > queryPos.unsqueeze(1); // slots are < 0: never masked
        scores = scores.masked_fill(masked, -std::numeric_limits<float>::infinity());
    }
    torch::Tensor probs;
    if (slots > 0 && sink.defined()) {
        // The sink: one more logit per head whose value is zero.
        const auto sinkColumn = sink.to(scores.dtype()).view({1, H, 1, 1}).expand({B, H, n, 1});
        probs = torch::softmax(torch::cat(std::vector<torch::Tensor>{sinkColumn, scores}, 3), -1)
                    .narrow(3, 1, scores.size(3));
    } else {
        probs = torch::softmax(scores, -1);
    }
    if (slotMass != nullptr && slots > 0)
        *slotMass = probs.narrow(3, 0, slots).sum(3).mean(1); // [B, n]
    auto out = blocks::matmul(probs, values).transpose(1, 2).reshape({B, n, m_config.nEmbd});
    return attn->c_proj->forward(out);
}

ForwardOut Gpt2Impl::forward(const torch::Tensor& ids, const ForwardArgs& args) {
    const int64_t n = ids.size(1);
    const int64_t B = ids.size(0);
    const int64_t written = args.writeTokens.defined() ? args.writeTokens.size(0) : 0;
    KvCache* cache = args.cache;
    const int64_t past = cache ? cache->length : 0;
    TORCH_CHECK(past + n <= m_config.nPositions, "window exceeds the model's positions");
    TORCH_CHECK(!cache || past + n + written <= cache->capacity, "window exceeds the KV cache");
    TORCH_CHECK(n + written > 0, "nothing to run");
    if (blocks::ownKernels(ids))
        blocks::followThreadBudget();

    // The slots' keys and values per reading block (layer - slotLayer), when the state
    // enters with this call rather than from the cache.
    std::vector<std::pair<torch::Tensor, torch::Tensor>> slotKV;
    if (args.state.defined()) {
        TORCH_CHECK(args.slotLayer >= 0 && args.slotLayers >= 1 &&
                        args.slotLayer + args.slotLayers <= m_config.nLayer,
                    "bad slot layer");
        TORCH_CHECK(args.state.dim() == 3, "the state must be [B, S, k]");
        if (cache == nullptr || cache->slotLayer < 0) {
            slotKV = slotKeyValues(args.state, args.slotLayer, args.slotLayers, args.memoryTokens);
            if (cache != nullptr) {
                TORCH_CHECK(past == 0, "a state can only enter a window before its first token");
                for (int i = 0; i < args.slotLayers; ++i) {
                    const auto& [slotK, slotV] = slotKV[size_t(i)];
                    TORCH_CHECK(slotK.size(2) == cache->slots, "the state has another slot count");
                    cache->k[size_t(args.slotLayer + i)].narrow(2, 0, cache->slots).copy_(slotK);
                    cache->v[size_t(args.slotLayer + i)].narrow(2, 0, cache->slots).copy_(slotV);
                }
                cache->slotLayer = args.slotLayer;
                cache->slotLayers = args.slotLayers;
            }
        }
    }

    torch::Tensor x;
    if (n > 0) {
        const auto positions = torch::arange(
            past, past + n, torch::TensorOptions().dtype(torch::kLong).device(ids.device()));
        x = wte->forward(ids) + wpe->forward(positions).unsqueeze(0);
    }
    if (written > 0) {
        // Write tokens: learned embeddings with no position, after the window's tokens.
        const auto w = args.writeTokens.to(wte->weight.dtype())
                           .unsqueeze(0)
                           .expand({B, written, m_config.nEmbd});
        x = x.defined() ? torch::cat({x, w}, 1) : w.contiguous();
    }

    ForwardOut out;
    const bool pool = args.layerWeights.defined() && args.poolMatrix.defined() && n > 0;
    const auto poolMatrix = pool ? args.poolMatrix.to(x.dtype()) : torch::Tensor();
    const int L = m_config.nLayer;
    auto tokens = [&](const torch::Tensor& t) { return written > 0 ? t.narrow(1, 0, n) : t; };
    for (int l = 0; l < L; ++l) {
        const auto& block = blocks[static_cast<size_t>(l)];
        const bool reads = l >= args.slotLayer && l < args.slotLayer + args.slotLayers;
        const bool fresh = reads && !slotKV.empty();
        const bool slotHere = fresh || (cache && cache->holdsState(l));
        torch::Tensor mass;
        const auto none = torch::Tensor();
        x = x +
            attention(l, block->ln_1->forward(x), cache, past,
                      fresh ? slotKV[size_t(l - args.slotLayer)].first : none,
                      fresh ? slotKV[size_t(l - args.slotLayer)].second : none, args.slotBias,
                      args.sink,
                      (args.wantSlotMass && slotHere && !out.slotMass.defined()) ? &mass : nullptr);
        x = x + block->mlp->c_proj->forward(
                    blocks::geluTanh(block->mlp->c_fc->forward(block->ln_2->forward(x))));
        if (mass.defined())
            out.slotMass = written > 0 ? mass.narrow(1, 0, n) : mass; // [B, n]
        if (args.blockOutputs)
            args.blockOutputs->push_back(tokens(x));
        if (l == L - 1)
            x = ln_f->forward(x);
        if (pool) {
            const auto term =
                blocks::matmul(poolMatrix, tokens(x)) * args.layerWeights[l]; // [B, S, k]
            out.pooled = out.pooled.defined() ? out.pooled + term : term;
        }
    }
    if (cache != nullptr)
        cache->length = past + n + written;
    out.hidden = tokens(x);
    if (written > 0)
        out.written = x.narrow(1, n, written);
    return out;
}

} // namespace baton::engine
