#include "model/checkpoint.h"

#include "model/hf_config.h"
#include "util/files.h"
#include "util/hash.h"

#include <torch/torch.h>

#include <dirent.h>
#include <set>

namespace baton::engine {

namespace {

constexpr const char* kPrefix = "transformer.";

std::string shapeText(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

bool isIgnoredBuffer(const std::string& name) {
    auto endsWith = [&](const char* suffix) {
        const std::string s(suffix);
        return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
    };
    return name.rfind("h.", 0) == 0 && (endsWith(".attn.bias") || endsWith(".attn.masked_bias"));
}

torch::ScalarType torchType(StDtype d) {
    switch (d) {
    case StDtype::F32:
        return torch::kFloat32;
    case StDtype::F16:
        return torch::kFloat16;
    case StDtype::BF16:
        return torch::kBFloat16;
    default:
        return torch::kFloat32;
    }
}

std::vector<std::pair<std::string, torch::Tensor>> gpt2Parameters(Gpt2Impl& net) {
    std::vector<std::pair<std::string, torch::Tensor>> out;
    for (const auto& item : net.named_parameters(true))
        out.emplace_back(item.key(), item.value());
    return out;
}

} // namespace

std::vector<ExpectedTensor> expectedGpt2Tensors(const ModelConfig& c) {
    const int64_t k = c.nEmbd, inner = c.nInner;
    std::vector<ExpectedTensor> out = {{"wte.weight", {c.vocabSize, k}, false},
                                       {"wpe.weight", {c.nPositions, k}, false}};
    for (int l = 0; l < c.nLayer; ++l) {
        const std::string p = "h." + std::to_string(l) + ".";
        out.push_back({p + "ln_1.weight", {k}, false});
        out.push_back({p + "ln_1.bias", {k}, false});
        out.push_back({p + "attn.c_attn.weight", {k, 3 * k}, true});
        out.push_back({p + "attn.c_attn.bias", {3 * k}, false});
        out.push_back({p + "attn.c_proj.weight", {k, k}, true});
        out.push_back({p + "attn.c_proj.bias", {k}, false});
        out.push_back({p + "ln_2.weight", {k}, false});
        out.push_back({p + "ln_2.bias", {k}, false});
        out.push_back({p + "mlp.c_fc.weight", {k, inner}, true});
        out.push_back({p + "mlp.c_fc.bias", {inner}, false});
        out.push_back({p + "mlp.c_proj.weight", {inner, k}, true});
        out.push_back({p + "mlp.c_proj.bias", {k}, false});
    }
    out.push_back({"ln_f.weight", {k}, false});
    out.push_back({"ln_f.bias", {k}, false});
    return out;
}

Result<void> refusePickles(const std::string& folder) {
    if (files::exists(files::join(folder, "model.safetensors")))
        return {};
    std::string pickle;
    if (DIR* dir = ::opendir(folder.c_str())) {
        while (dirent* e = ::readdir(dir)) {
            const std::string name = e->d_name;
            for (const char* ext : {".bin", ".pt", ".pth", ".ckpt", ".pkl"}) {
                const std::string s(ext);
                if (name.size() > s.size() &&
                    name.compare(name.size() - s.size(), s.size(), s) == 0)
                    pickle = name;
            }
        }
        ::closedir(dir);
    } else {
        return makeError(ErrorCode::FileNotFound, "model folder not found: " + folder);
    }
    if (!pickle.empty())
        return makeError(ErrorCode::PickleRefused,
                         folder + " holds " + pickle +
                             " but no model.safetensors. Pickled PyTorch files can run arbitrary "
                             "code when loaded, so Baton never opens them. Download the "
                             "model.safetensors version of this model, or convert it with the "
                             "Python 'safetensors' package.");
    return makeError(ErrorCode::FileNotFound,
                     "no model.safetensors in " + folder +
                         " (a Hugging Face GPT-2 folder holds config.json, model.safetensors, "
                         "vocab.json and merges.txt)");
}

Result<std::map<std::string, const StTensor*>> matchGpt2Tensors(const SafetensorsFile& file,
                                                                const ModelConfig& config) {
    const std::string& path = file.path();
    std::map<std::string, const StTensor*> byName;
    int fileLayers = 0;
    for (const auto& t : file.tensors()) {
        std::string name = t.name;
        if (name.rfind(kPrefix, 0) == 0)
            name = name.substr(std::char_traits<char>::length(kPrefix));
        if (isIgnoredBuffer(name))
            continue;
        if (name == "lm_head.weight") { // tied to wte: only its shape is checked
            if (t.shape != std::vector<int64_t>{config.vocabSize, config.nEmbd})
                return makeError(ErrorCode::TensorShapeMismatch,
                                 path + ": lm_head.weight has shape " + shapeText(t.shape) +
                                     ", expected " + shapeText({config.vocabSize, config.nEmbd}));
            continue;
        }
        if (name.rfind("h.", 0) == 0) {
            const auto dot = name.find('.', 2);
            try {
                fileLayers = std::max(fileLayers, std::stoi(name.substr(2, dot - 2)) + 1);
            } catch (...) {
            }
        }
        if (!byName.emplace(name, &t).second)
            return makeError(ErrorCode::BadHeader, path + ": tensor " + name +
                                                       " appears both with and without the '" +
                                                       kPrefix + "' prefix");
    }
    // Shapes that contradict config.json itself are reported as a config mismatch.
    auto configMismatch = [&](const std::string& what) {
        return makeError(ErrorCode::ConfigMismatch, path + " does not match config.json: " + what);
    };
    if (fileLayers != config.nLayer && fileLayers > 0)
        return configMismatch("config.json says n_layer = " + std::to_string(config.nLayer) +
                              " but the weights have " + std::to_string(fileLayers) + " blocks");
    for (const auto& [name, field, dim, value] :
         {std::tuple<const char*, const char*, int, int>{"wte.weight", "vocab_size", 0,
                                                         config.vocabSize},
          {"wte.weight", "n_embd", 1, config.nEmbd},
          {"wpe.weight", "n_positions", 0, config.nPositions},
          {"h.0.mlp.c_fc.weight", "n_inner", 1, config.nInner}}) {
        const auto it = byName.find(name);
        if (it != byName.end() && it->second->shape.size() == 2 &&
            it->second->shape[static_cast<size_t>(dim)] != value)
            return configMismatch(std::string("config.json says ") + field + " = " +
                                  std::to_string(value) + " but " + name + " has shape " +
                                  shapeText(it->second->shape));
    }

    std::map<std::string, const StTensor*> matched;
    for (const auto& e : expectedGpt2Tensors(config)) {
        const auto it = byName.find(e.name);
        if (it == byName.end())
            return makeError(ErrorCode::MissingTensor,
                             path + ": the tensor " + e.name + " is missing");
        const StTensor& t = *it->second;
        if (t.shape != e.hfShape)
            return makeError(ErrorCode::TensorShapeMismatch,
                             path + ": " + e.name + " has shape " + shapeText(t.shape) +
                                 ", expected " + shapeText(e.hfShape));
        if (t.dtype != StDtype::F32 && t.dtype != StDtype::F16 && t.dtype != StDtype::BF16)
            return makeError(ErrorCode::Unsupported,
                             path + ": " + e.name + " is stored as " + stDtypeName(t.dtype) +
                                 "; GPT-2 weights must be F32, F16 or BF16");
        matched[e.name] = &t;
        byName.erase(it);
    }
    if (!byName.empty())
        return makeError(ErrorCode::UnexpectedTensor,
                         path + ": unexpected tensor " + byName.begin()->first +
                             " (this is not a GPT-2 checkpoint of the configured shape)");
    return matched;
}

Result<LoadedGpt2> loadGpt2(const std::string& folder, const CancelToken& cancel,
                            const std::function<bool(double)>& progress) {
    if (!files::isDirectory(folder))
        return makeError(ErrorCode::FileNotFound, "model folder not found: " + folder);
    if (auto r = refusePickles(folder); !r)
        return r.error();
    const std::string configPath = files::join(folder, "config.json");
    auto configText = files::readAll(configPath, size_t(16) << 20);
    if (!configText)
        return configText.error();
    auto config = parseHfConfig(*configText, configPath);
    if (!config)
        return config.error();
    auto file = openSafetensors(files::join(folder, "model.safetensors"));
    if (!file)
        return file.error();
    auto matched = matchGpt2Tensors(*file, *config);
    if (!matched)
        return matched.error();

    // Everything is consistent: allocate and read.
    LoadedGpt2 out;
    out.config = *config;
    try {
        out.net = Gpt2(*config);
    } catch (const std::exception& e) {
        return makeError(ErrorCode::OutOfMemory,
                         std::string("cannot allocate the model: ") + e.what());
    }
    std::set<StDtype> dtypes;
    ContentHash hash;
    hash.update(*configText);
    hash.update(file->headerJson());
    uint64_t totalBytes = 0, doneBytes = 0;
    for (const auto& [name, t] : *matched)
        totalBytes += t->bytes();
    std::map<std::string, bool> conv;
    for (const auto& e : expectedGpt2Tensors(*config))
        conv[e.name] = e.conv1d;

    torch::NoGradGuard noGrad;
    for (auto& [name, param] : gpt2Parameters(*out.net)) {
        if (cancel.cancelled())
            return makeError(ErrorCode::Cancelled, "loading was cancelled");
        const StTensor* t = matched->at(name);
        dtypes.insert(t->dtype);
        auto raw = torch::empty(t->shape, torch::TensorOptions().dtype(torchType(t->dtype)));
        if (auto r = file->read(*t, raw.data_ptr()); !r)
            return r.error();
        hash.update(raw.data_ptr(), t->bytes());
        auto value = raw.to(torch::kFloat32);
        if (conv.at(name))
            value = value.t();
        param.copy_(value);
        doneBytes += t->bytes();
        if (progress && !progress(double(doneBytes) / double(std::max<uint64_t>(totalBytes, 1))))
            return makeError(ErrorCode::Cancelled, "loading was cancelled");
    }
    out.storageDtype = dtypes.size() == 1 ? stDtypeName(*dtypes.begin()) : "mixed";
    out.contentHash = hash.hex();
    return out;
}

Result<void> saveGpt2Weights(Gpt2Impl& net, const std::string& path, StDtype dtype,
                             const std::string& prefix) {
    torch::NoGradGuard noGrad;
    std::map<std::string, bool> conv;
    for (const auto& e : expectedGpt2Tensors(net.config()))
        conv[e.name] = e.conv1d;
    std::vector<torch::Tensor> keep;
    std::vector<StWriteTensor> tensors;
    for (auto& [name, param] : gpt2Parameters(net)) {
        auto value = param.detach().to(torch::kCPU);
        if (conv.at(name))
            value = value.t();
        value = value.to(torchType(dtype)).contiguous();
        keep.push_back(value);
        StWriteTensor w;
        w.name = prefix + name;
        w.dtype = dtype;
        w.shape = value.sizes().vec();
        w.data = value.data_ptr();
        w.bytes = static_cast<size_t>(value.numel() * value.element_size());
        tensors.push_back(std::move(w));
    }
    return writeSafetensors(path, tensors, {{"format", "pt"}});
}

} // namespace baton::engine
