#include "model/weight_files.h"

#include "util/files.h"

#include <baton/common/json.h>

#include <dirent.h>
#include <set>

namespace baton::engine {

namespace {

constexpr const char* kIndex = "model.safetensors.index.json";
constexpr const char* kPrefix = "transformer.";

bool isIgnoredBuffer(const std::string& name) {
    auto endsWith = [&](const char* suffix) {
        const std::string s(suffix);
        return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
    };
    return name.rfind("h.", 0) == 0 && (endsWith(".attn.bias") || endsWith(".attn.masked_bias"));
}

} // namespace

std::string shapeText(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

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
    if (files::exists(files::join(folder, "model.safetensors")) ||
        files::exists(files::join(folder, kIndex)))
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

Result<std::vector<SafetensorsFile>> openWeightFiles(const std::string& folder) {
    std::vector<SafetensorsFile> files;
    const std::string single = files::join(folder, "model.safetensors");
    if (files::exists(single)) {
        auto file = openSafetensors(single);
        if (!file)
            return file.error();
        files.push_back(std::move(*file));
        return files;
    }
    const std::string indexPath = files::join(folder, kIndex);
    auto text = files::readAll(indexPath, size_t(64) << 20);
    if (!text)
        return text.error();
    std::string why;
    auto index = json::parse(*text, &why);
    const json::Json* map = nullptr;
    if (index && index->is_object())
        if (const auto it = index->find("weight_map"); it != index->end())
            map = &*it;
    if (!map || !map->is_object() || map->empty())
        return makeError(ErrorCode::BadHeader,
                         indexPath + " has no weight_map" + (why.empty() ? "" : " (" + why + ")"));
    // Which shard holds each tensor; the shards are plain files of this folder.
    std::map<std::string, std::string> shardOf;
    std::set<std::string> shards;
    for (const auto& [tensor, shard] : map->items()) {
        if (!shard.is_string())
            return makeError(ErrorCode::BadHeader,
                             indexPath + ": the file of " + tensor + " is not a string");
        const std::string name = shard.get<std::string>();
        if (name.empty() || name.find('/') != std::string::npos || name == "." || name == ".." ||
            name.find('\0') != std::string::npos)
            return makeError(ErrorCode::BadHeader,
                             indexPath + " names \"" + name + "\" for " + tensor +
                                 ": a shard must be a file of the model's folder");
        shardOf[tensor] = name;
        shards.insert(name);
    }
    std::map<std::string, size_t> fileOf;
    for (const std::string& name : shards) {
        auto file = openSafetensors(files::join(folder, name));
        if (!file)
            return file.error();
        fileOf[name] = files.size();
        files.push_back(std::move(*file));
    }
    // The index and the shards agree: every tensor the index maps is where it says.
    for (const auto& [tensor, shard] : shardOf) {
        if (!files[fileOf.at(shard)].find(tensor))
            return makeError(ErrorCode::MissingTensor, indexPath + " puts " + tensor + " in " +
                                                           shard + ", which does not hold it");
    }
    return files;
}

Result<std::map<std::string, MatchedTensor>>
matchGpt2Tensors(const std::vector<SafetensorsFile>& files, const ModelConfig& config) {
    if (files.empty())
        return makeError(ErrorCode::FileNotFound, "no weight files");
    // Messages name the file (or the first shard's folder for what spans them).
    const std::string& first = files.front().path();
    const std::string path =
        files.size() == 1 ? first : first.substr(0, first.find_last_of('/')) + " (its shards)";
    std::map<std::string, MatchedTensor> byName;
    int fileLayers = 0;
    for (size_t f = 0; f < files.size(); ++f)
        for (const auto& t : files[f].tensors()) {
            std::string name = t.name;
            if (name.rfind(kPrefix, 0) == 0)
                name = name.substr(std::char_traits<char>::length(kPrefix));
            if (isIgnoredBuffer(name))
                continue;
            if (name == "lm_head.weight") { // tied to wte: only its shape is checked
                if (t.shape != std::vector<int64_t>{config.vocabSize, config.nEmbd})
                    return makeError(ErrorCode::TensorShapeMismatch,
                                     files[f].path() + ": lm_head.weight has shape " +
                                         shapeText(t.shape) + ", expected " +
                                         shapeText({config.vocabSize, config.nEmbd}));
                continue;
            }
            if (name.rfind("h.", 0) == 0) {
                const auto dot = name.find('.', 2);
                try {
                    fileLayers = std::max(fileLayers, std::stoi(name.substr(2, dot - 2)) + 1);
                } catch (...) {
                }
            }
            if (!byName.emplace(name, MatchedTensor{&t, f}).second)
                return makeError(ErrorCode::BadHeader,
                                 path + ": tensor " + name +
                                     (files.size() == 1
                                          ? std::string(" appears both with and without the '") +
                                                kPrefix + "' prefix"
                                          : std::string(" appears twice (in one shard or two, with "
                                                        "or without the '") +
                                                kPrefix + "' prefix)"));
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
        if (it != byName.end() && it->second.tensor->shape.size() == 2 &&
            it->second.tensor->shape[static_cast<size_t>(dim)] != value)
            return configMismatch(std::string("config.json says ") + field + " = " +
                                  std::to_string(value) + " but " + name + " has shape " +
                                  shapeText(it->second.tensor->shape));
    }

    std::map<std::string, MatchedTensor> matched;
    for (const auto& e : expectedGpt2Tensors(config)) {
        const auto it = byName.find(e.name);
        if (it == byName.end())
            return makeError(ErrorCode::MissingTensor,
                             path + ": the tensor " + e.name + " is missing");
        const StTensor& t = *it->second.tensor;
        if (t.shape != e.hfShape)
            return makeError(ErrorCode::TensorShapeMismatch,
                             path + ": " + e.name + " has shape " + shapeText(t.shape) +
                                 ", expected " + shapeText(e.hfShape));
        if (t.dtype != StDtype::F32 && t.dtype != StDtype::F16 && t.dtype != StDtype::BF16)
            return makeError(ErrorCode::Unsupported,
                             path + ": " + e.name + " is stored as " + stDtypeName(t.dtype) +
                                 "; GPT-2 weights must be F32, F16 or BF16");
        matched[e.name] = it->second;
        byName.erase(it);
    }
    if (!byName.empty())
        return makeError(ErrorCode::UnexpectedTensor,
                         path + ": unexpected tensor " + byName.begin()->first +
                             " (this is not a GPT-2 checkpoint of the configured shape)");
    return matched;
}

} // namespace baton::engine
