#include "baton/engine/model.h"

#include "kernels/core_budget.h"
#include "kernels/weight_matrix.h"
#include "kernels/worker_team.h"
#include "model/checkpoint.h"
#include "model/converted_weights.h"
#include "model/fixed_blocks.h"
#include "model/hf_config.h"
#include "model/identity_memo.h"
#include "model/model_impl.h"
#include "util/files.h"
#include "util/hash.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <fstream>
#include <thread>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace baton::engine {

std::string runtimeVersions() {
    std::string v = "LibTorch " TORCH_VERSION;
    v += torch::cuda::is_available() ? " (CUDA available)" : " (CPU)";
    v += "; CPU decoder kernels ";
    v += cpu::isaName(cpu::bestIsa());
    return v;
}

void rememberModelIdentitiesIn(const std::string& folder) {
    setIdentityMemoFolder(folder);
}

void keepConvertedWeightsIn(const std::string& folder, uint64_t maxBytes) {
    setConvertedWeightsFolder(folder, maxBytes);
}

void initializeRuntime(int threads) {
    cpu::setThreadCap(threads);
    const int n = cpu::threadCap();
    at::set_num_threads(n);
    cpu::setThreadCount(n);
}

void Model::Impl::refreshRecurrenceCaches() {
    torch::NoGradGuard noGrad;
    auto host = [](const torch::Tensor& t) {
        if (!t.defined())
            return std::vector<float>();
        auto c = t.to(torch::kCPU, torch::kFloat32).contiguous();
        return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    };
    const auto weights = recurrence->layerWeights();
    layerWeights = weights.to(dtype);
    layerWeightsHost = host(weights);
    slotBias = recurrence->slotBias.defined() ? recurrence->slotBias.to(dtype) : torch::Tensor();
    slotBiasHost = host(recurrence->slotBias);
    sink = recurrence->sink.defined() ? recurrence->sink.to(dtype) : torch::Tensor();
    sinkHost = host(recurrence->sink);
}

ForwardArgs Model::Impl::windowArgs(const torch::Tensor& state, int64_t first, int64_t n,
                                    int64_t window, bool trainable) const {
    ForwardArgs args;
    if (!recurrent())
        return args;
    args.slotLayer = insertBlock();
    args.state = state;
    if (trainable) {
        args.layerWeights = recurrence->layerWeights();
        args.slotBias = recurrence->slotBias;
        args.sink = recurrence->sink;
    } else {
        args.layerWeights = layerWeights;
        args.slotBias = slotBias;
        args.sink = sink;
    }
    args.slotLayers = recurrence->config().readBlocks;
    args.memoryTokens = recurrence->config().memoryTokens;
    if (recurrence->config().writeTokens) {
        if (first == 0)
            args.writeTokens = recurrence->writeTokens;
        args.layerWeights = torch::Tensor(); // nothing is pooled
        return args;
    }
    args.poolMatrix = recurrence->segmentMatrix(first, n, window,
                                                torch::TensorOptions().dtype(dtype).device(device));
    return args;
}

torch::Tensor Model::Impl::nextState(const ForwardOut& out, const torch::Tensor& previous,
                                     int64_t window, int64_t filled) {
    const auto& summary = recurrence->config().writeTokens ? out.written : out.pooled;
    TORCH_CHECK(summary.defined(), "the window's forward pass did not compute the next state");
    return nextStateFrom(summary, previous, window, filled);
}

torch::Tensor Model::Impl::nextStateFrom(const torch::Tensor& summary,
                                         const torch::Tensor& previous, int64_t window,
                                         int64_t filled) {
    return recurrence->forward(summary.to(dtype), previous, window, filled);
}

void Model::Impl::buildDecoder() {
    decoder.reset();
    if (!blocks::ownKernels(device) || dtype != torch::kFloat32)
        return;
    const ModelConfig& c = info.config;
    cpu::DecoderWeights w;
    w.nLayer = c.nLayer;
    w.nHead = c.nHead;
    w.nEmbd = c.nEmbd;
    w.nInner = c.nInner;
    w.vocab = c.vocabSize;
    w.eps = static_cast<float>(c.layerNormEps);
    auto p = [](const torch::Tensor& t) { return t.data_ptr<float>(); };
    w.wte = net->wte->view();
    w.wpe = p(net->wpe->weight);
    w.lnfW = p(net->ln_f->weight);
    w.lnfB = p(net->ln_f->bias);
    for (const auto& b : net->blocks) {
        cpu::LayerWeights l{};
        l.ln1W = p(b->ln_1->weight);
        l.ln1B = p(b->ln_1->bias);
        l.attnW = b->attn->c_attn->view();
        l.attnB = p(b->attn->c_attn->bias);
        l.projW = b->attn->c_proj->view();
        l.projB = p(b->attn->c_proj->bias);
        l.ln2W = p(b->ln_2->weight);
        l.ln2B = p(b->ln_2->bias);
        l.fcW = b->mlp->c_fc->view();
        l.fcB = p(b->mlp->c_fc->bias);
        l.fcProjW = b->mlp->c_proj->view();
        l.fcProjB = p(b->mlp->c_proj->bias);
        w.layers.push_back(l);
    }
    decoder = std::make_unique<cpu::Decoder>(std::move(w));
}

Model::Model(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl)) {}
Model::~Model() = default;

const ModelInfo& Model::info() const {
    return m_impl->info;
}
std::shared_ptr<const Tokenizer> Model::tokenizer() const {
    return m_impl->tokenizer;
}

namespace {

Result<torch::Device> resolveDevice(const LoadOptions& options) {
    torch::Device device(torch::kCPU);
    try {
        device = torch::Device(options.device);
    } catch (const std::exception&) {
        return makeError(ErrorCode::InvalidArgument,
                         "unknown device '" + options.device + "' (use cpu, cuda or cuda:N)");
    }
    if (device.is_cuda() && !torch::cuda::is_available())
        return makeError(ErrorCode::Unsupported,
                         "CUDA was requested but this LibTorch has no usable CUDA device");
    if (!device.is_cpu() && !device.is_cuda())
        return makeError(ErrorCode::Unsupported, "only cpu and cuda devices are supported");
    if ((options.weights == WeightFormat::Int8 || options.weights == WeightFormat::Q4) &&
        !blocks::ownKernels(device))
        return makeError(ErrorCode::Unsupported,
                         std::string(weightFormatName(options.weights)) +
                             " weights run on the CPU only (use f16 or bf16 on CUDA)");
    return device;
}

// Moves the network to its device and dtype for inference and fills in the info.
void finishForInference(Model::Impl& impl, const ModelConfig& config, torch::Device device,
                        const LoadOptions& options) {
    impl.device = device;
    // The CPU computes in float32 whatever the weights' format; CUDA computes in the
    // 16-bit formats themselves.
    impl.dtype = torch::kFloat32;
    if (device.is_cuda() && options.weights == WeightFormat::F16)
        impl.dtype = torch::kHalf;
    if (device.is_cuda() && options.weights == WeightFormat::BF16)
        impl.dtype = torch::kBFloat16;
    impl.net->to(device, impl.dtype);
    impl.net->eval();
    for (auto& p : impl.net->parameters())
        p.set_requires_grad(false);
    if (impl.recurrent()) {
        impl.recurrence->to(device, impl.dtype);
        impl.recurrence->eval();
        for (auto& p : impl.recurrence->parameters())
            p.set_requires_grad(false);
        impl.info.recurrence = impl.recurrence->config();
        impl.refreshRecurrenceCaches();
    }
    ModelInfo& info = impl.info;
    info.config = config;
    info.weights = options.weights;
    info.device = device.str();
    if (impl.tokenizer) {
        info.tokenizerKind = impl.tokenizer->kind();
        info.tokenizerVocabSize = impl.tokenizer->vocabSize();
    }
    info.parameterCount = impl.net->parameterCount();
    if (impl.recurrent())
        for (const auto& p : impl.recurrence->parameters())
            info.parameterCount += p.numel();
    if (blocks::ownKernels(device))
        impl.net->packWeights(options.weights);
    impl.buildDecoder();
}

} // namespace

Result<std::shared_ptr<Model>> createModel(const ModelConfig& config,
                                           std::shared_ptr<const Tokenizer> tokenizer,
                                           uint64_t seed, const LoadOptions& options,
                                           const std::optional<RecurrenceConfig>& recurrence) {
    if (auto r = validateModelConfig(config); !r)
        return r.error();
    if (tokenizer && tokenizer->vocabSize() > config.vocabSize)
        return makeError(ErrorCode::TokenizerMismatch,
                         "the tokenizer has more tokens than the model's vocabulary");
    try {
        auto device = resolveDevice(options);
        if (!device)
            return device.error();
        auto impl = std::make_unique<Model::Impl>();
        impl->tokenizer = std::move(tokenizer);
        torch::manual_seed(seed);
        impl->net = Gpt2(config);
        impl->net->initialiseForTraining();
        if (recurrence) {
            if (auto r = validateRecurrenceConfig(*recurrence, config); !r)
                return r.error();
            impl->recurrence = Recurrence(config, *recurrence);
            impl->recurrence->initialise();
        }
        impl->info.storageDtype = "F32";
        impl->info.path = "";
        ContentHash id;
        id.update("fresh model seed " + std::to_string(seed));
        id.update(hfConfigJson(config));
        impl->info.identity = id.hex();
        finishForInference(*impl, config, *device, options);
        return ModelAccess::make(std::move(impl));
    } catch (const c10::Error& e) {
        return makeError(ErrorCode::Internal,
                         std::string("LibTorch: ") + e.what_without_backtrace());
    } catch (const std::bad_alloc&) {
        return makeError(ErrorCode::OutOfMemory, "out of memory while creating a model");
    }
}

namespace {

// Freed memory the heap keeps: a model unloaded just before a load, and the load's own
// temporaries (rows converted to the held format, tensors read from the file) freed
// between the matrices it keeps. Once the allocator has raised its mmap threshold
// (glibc does when a large block is freed: a prefill's temporaries, a model
// unloaded), such pages stay with the process: reloading GPT-2 XL in int8 after a
// first token kept 1.2 GB more than the model and peaked 1.2 GB higher
// (tests/bench/bench_gpt2 --model DIR: private_rss_after_load_mb, peak_rss_after_load_mb).
// A load gives them back before it starts and when it is done.
void releaseFreedPages() {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

// Model::load and loadModelWithoutTokenizer: `tokenizer` null means the token ids are
// `tokenizerIdentity`'s (a synthetic task's).
Result<std::shared_ptr<Model>> loadFolder(const std::string& folder, const LoadOptions& options,
                                          std::shared_ptr<const Tokenizer> tokenizer,
                                          const std::string& tokenizerIdentity) {
    try {
        releaseFreedPages(); // a model unloaded just before
        auto resolved = resolveDevice(options);
        if (!resolved)
            return resolved.error();
        const torch::Device device = *resolved;

        // A CPU model's weight matrices go straight into their format. BF16 weights are
        // copied where the CPU multiplies bf16 natively: the mapped file's column-major
        // products have no such path and decode 15-30% slower (docs/performance.md).
        const bool map = options.mapWeights &&
                         !(options.weights == WeightFormat::BF16 && cpu::nativeBf16Products());
        auto loaded = loadGpt2(folder, options.cancel, options.progress,
                               blocks::ownKernels(device) ? options.weights : WeightFormat::F32,
                               map, options.mapWeights);
        if (!loaded)
            return loaded.error();
        if (tokenizer && tokenizer->vocabSize() > loaded->config.vocabSize)
            return makeError(ErrorCode::TokenizerMismatch,
                             "the tokenizer has " + std::to_string(tokenizer->vocabSize()) +
                                 " tokens but the model only " +
                                 std::to_string(loaded->config.vocabSize) +
                                 ": this tokenizer does not belong to this model");

        auto recurrence = loadRecurrence(folder, loaded->config, tokenizerIdentity);
        if (!recurrence)
            return recurrence.error();
        if (!options.adapter.empty()) {
            // The base: a baseline model, the very one the adapter was trained on.
            if (*recurrence)
                return makeError(ErrorCode::InvalidArgument,
                                 folder + " has a recurrence module of its own: an adapter goes "
                                          "on the baseline model it was trained on");
            auto base = readAdapterBase(options.adapter);
            if (!base)
                return base.error();
            ContentHash baseId;
            baseId.update(loaded->contentHash);
            baseId.update(tokenizerIdentity);
            if (baseId.hex() != base->identity)
                return makeError(
                    ErrorCode::ConfigMismatch,
                    "the adapter in " + options.adapter + " was trained on " +
                        (base->name.empty() ? std::string("another model") : base->name) +
                        " (identity " + base->identity + "), not on " + folder + " (identity " +
                        baseId.hex() + ")");
            recurrence = loadRecurrence(options.adapter, loaded->config, tokenizerIdentity);
            if (!recurrence)
                return recurrence.error();
            if (!*recurrence)
                return makeError(ErrorCode::FileNotFound,
                                 options.adapter + " holds no recurrence module "
                                                   "(recurrence.safetensors and baton.json)");
        }

        auto impl = std::make_unique<Model::Impl>();
        impl->tokenizer = tokenizer;
        impl->net = loaded->net;
        ModelInfo& info = impl->info;
        info.path = folder;
        info.adapter = options.adapter;
        info.storageDtype = loaded->storageDtype;
        ContentHash id;
        id.update(loaded->contentHash);
        id.update(tokenizerIdentity);
        if (*recurrence) {
            impl->recurrence = (*recurrence)->module;
            id.update((*recurrence)->contentHash);
        }
        info.identity = id.hex();
        finishForInference(*impl, loaded->config, device, options);
        releaseFreedPages();
        info.mappedBytes = blocks::ownKernels(device) ? int64_t(loaded->mappedBytes) : 0;
        info.keptBytes = int64_t(loaded->keptBytes);
        spdlog::info("loaded {} ({} layers, {} wide, {} parameters, {} stored, {} on {})", folder,
                     info.config.nLayer, info.config.nEmbd, info.parameterCount, info.storageDtype,
                     weightFormatName(info.weights), info.device);
        return ModelAccess::make(std::move(impl));
    } catch (const c10::Error& e) {
        return makeError(ErrorCode::Internal,
                         std::string("LibTorch: ") + e.what_without_backtrace());
    } catch (const std::bad_alloc&) {
        return makeError(ErrorCode::OutOfMemory, "out of memory while loading " + folder);
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, e.what());
    }
}

} // namespace

Result<std::shared_ptr<Model>> Model::load(const std::string& folder, const LoadOptions& options) {
    auto tokenizer = loadTokenizer(folder);
    if (!tokenizer)
        return tokenizer.error();
    return loadFolder(folder, options, *tokenizer, (*tokenizer)->identity());
}

Result<std::shared_ptr<Model>> loadModelWithoutTokenizer(const std::string& folder,
                                                         const std::string& identity,
                                                         const LoadOptions& options) {
    return loadFolder(folder, options, nullptr, identity);
}

Result<std::vector<float>> Model::windowLogits(const std::vector<int32_t>& ids) const {
    const auto& c = m_impl->info.config;
    if (ids.empty() || static_cast<int>(ids.size()) > c.nPositions)
        return makeError(ErrorCode::InvalidArgument,
                         "a window holds 1 to " + std::to_string(c.nPositions) + " tokens");
    for (int32_t id : ids)
        if (id < 0 || id >= c.vocabSize)
            return makeError(ErrorCode::InvalidArgument,
                             "token id " + std::to_string(id) + " is outside the vocabulary");
    try {
        torch::NoGradGuard noGrad;
        std::vector<int64_t> v(ids.begin(), ids.end());
        auto input = torch::tensor(v, torch::kLong).to(m_impl->device).unsqueeze(0);
        auto out = m_impl->net->forward(input);
        auto logits = m_impl->net->logits(out.hidden)
                          .squeeze(0)
                          .to(torch::kCPU, torch::kFloat32)
                          .contiguous();
        return std::vector<float>(logits.data_ptr<float>(),
                                  logits.data_ptr<float>() + logits.numel());
    } catch (const c10::Error& e) {
        return makeError(ErrorCode::Internal,
                         std::string("LibTorch: ") + e.what_without_backtrace());
    }
}

} // namespace baton::engine
