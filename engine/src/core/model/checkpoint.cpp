#include "model/checkpoint.h"

#include "model/baton_json.h"
#include "model/converted_weights.h"
#include "model/hf_config.h"
#include "model/identity_memo.h"
#include "model/weight_loader.h"
#include "util/files.h"
#include "util/hash.h"

#include <baton/common/json.h>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <mutex>
#include <set>
#include <thread>

namespace baton::engine {

namespace {

// The way loadGpt2 hashes a checkpoint (config text, headers, the tensors' bytes in
// parameter order): a remembered hash is only reused by the same recipe.
constexpr const char* kContentHashRecipe = "gpt2 content hash 1";

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

std::vector<std::pair<std::string, torch::Tensor>> namedParameters(torch::nn::Module& net) {
    std::vector<std::pair<std::string, torch::Tensor>> out;
    for (const auto& item : net.named_parameters(true))
        out.emplace_back(item.key(), item.value());
    return out;
}

// A stored tensor's mapped bytes as the [rows, cols] matrix `param` holds (a vector
// is one row).
StoredMatrix matrixFor(const unsigned char* bytes, const StTensor& t, const torch::Tensor& param,
                       bool transposed) {
    const int64_t rows = param.dim() == 2 ? param.size(0) : 1;
    return {bytes, t.dtype, rows, param.numel() / rows, transposed};
}

// Reads a stored tensor into a float32 parameter of the same shape, adding its raw
// bytes to `hash`.
Result<void> readInto(const SafetensorsFile& file, const StTensor& t, torch::Tensor& param,
                      ContentHash& hash) {
    auto bytes = file.mapped(t);
    if (!bytes)
        return bytes.error();
    hash.update(*bytes, t.bytes());
    loadFloat(matrixFor(*bytes, t, param, false), param.data_ptr<float>());
    return {};
}

std::vector<StWriteTensor>
toWriteList(const std::vector<std::pair<std::string, torch::Tensor>>& named, StDtype dtype,
            std::vector<torch::Tensor>& keep) {
    std::vector<StWriteTensor> out;
    for (const auto& [name, value] : named) {
        auto v = value.to(torchType(dtype)).contiguous();
        keep.push_back(v);
        out.push_back({name, dtype, v.sizes().vec(), v.data_ptr(),
                       static_cast<size_t>(v.numel() * v.element_size())});
    }
    return out;
}

// Whether a stored tensor can be the weights it loads into as it lies in the map: the
// stored dtype is the one held (`format`), and its address is aligned for it.
bool sharesMappedBytes(const StoredMatrix& m, WeightFormat format) {
    return formatOf(m.dtype) == format &&
           reinterpret_cast<uintptr_t>(m.data) % cpu::weightBytes(format) == 0;
}

// Makes `param` (float32) or `pack` (16-bit) the mapped bytes of `m`, no copy; `keep`
// holds the map for as long as they live. A Conv1D weight stays [in, out] and is seen
// transposed (torch strides; a column-major matrix for the decoder).
void shareMapped(const StoredMatrix& m, std::shared_ptr<const void> keep, torch::Tensor& param,
                 PackableWeight* pack) {
    void* data = const_cast<unsigned char*>(m.data);
    if (pack != nullptr) {
        pack->packed = std::make_shared<const cpu::PackedMatrix>(cpu::PackedMatrix::borrow(
            {formatOf(m.dtype), data, nullptr, m.rows, m.cols, m.transposed}, std::move(keep)));
        param.set_(); // the float32 parameter is never touched
        return;
    }
    const auto hold = [keep = std::move(keep)](void*) {};
    const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
    if (m.transposed)
        param.set_(torch::from_blob(data, {m.cols, m.rows}, hold, f32).t());
    else
        param.set_(torch::from_blob(data, param.sizes(), hold, f32));
}

} // namespace

Result<LoadedGpt2> loadGpt2(const std::string& folder, const CancelToken& cancel,
                            const std::function<bool(double)>& progress, WeightFormat packTo,
                            bool share, bool keepConverted) {
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
    auto files = openWeightFiles(folder);
    if (!files)
        return files.error();
    auto matched = matchGpt2Tensors(*files, *config);
    if (!matched)
        return matched.error();

    // Everything is consistent: allocate (untouched until written) and read.
    LoadedGpt2 out;
    out.config = *config;
    try {
        out.net = Gpt2(*config);
    } catch (const std::exception& e) {
        return makeError(ErrorCode::OutOfMemory,
                         std::string("cannot allocate the model: ") + e.what());
    }
    std::map<std::string, bool> conv;
    for (const auto& e : expectedGpt2Tensors(*config))
        conv[e.name] = e.conv1d;
    std::map<std::string, PackableWeight*> packable;
    if (packTo != WeightFormat::F32)
        for (auto& [name, w] : out.net->packableWeights())
            packable[name] = w;

    // Every stored tensor, in parameter order, mapped.
    struct Item {
        std::string name;
        torch::Tensor param;
        const StTensor* stored;
        const SafetensorsFile* file;
        StoredMatrix matrix;
        PackableWeight* pack;
        bool shared = false; // the weights are the mapped bytes themselves
    };
    std::vector<Item> items;
    std::set<StDtype> dtypes;
    uint64_t totalBytes = 0;
    for (auto& [name, param] : namedParameters(*out.net)) {
        const MatchedTensor where = matched->at(name);
        const StTensor* t = where.tensor;
        const SafetensorsFile* file = &(*files)[where.file];
        auto bytes = file->mapped(*t);
        if (!bytes)
            return bytes.error();
        const auto it = packable.find(name);
        items.push_back({name, param, t, file, matrixFor(*bytes, *t, param, conv.at(name)),
                         it == packable.end() ? nullptr : it->second, false});
        dtypes.insert(t->dtype);
        totalBytes += t->bytes();
    }

    // The content hash (config, header, every tensor's bytes in parameter order) runs
    // on its own thread, never ahead of the tensor being converted; a tensor's pages
    // leave this process once both are done with it, so at most a few tensors of the
    // file are resident at a time. A hash remembered for these very files
    // (identity_memo.h) is not computed again.
    std::vector<std::string> hashedPaths{configPath};
    for (const SafetensorsFile& file : *files)
        hashedPaths.push_back(file.path());
    const auto memoKey = identityMemoKey(kContentHashRecipe, hashedPaths);
    const auto remembered = memoKey ? recallIdentity(*memoKey) : std::nullopt;
    ContentHash hash;
    hash.update(*configText);
    for (const SafetensorsFile& file : *files) // one header for a single file, as always
        hash.update(file.headerJson());
    // The matrices this load converts, mapped instead from the file an earlier load kept
    // when there is one; else kept once converted (when the hash will be remembered).
    std::vector<ConvertedShape> converting;
    for (const Item& item : items)
        if (item.pack != nullptr && !(share && sharesMappedBytes(item.matrix, packTo)))
            converting.push_back({item.name, item.matrix.rows, item.matrix.cols});
    keepConverted = keepConverted && !converting.empty() && !keptWeightsFolder().empty();
    const auto kept = keepConverted && remembered
                          ? ConvertedWeights::open(*remembered, packTo, converting)
                          : std::nullopt;
    const uint64_t writeBytes = keepConverted && !kept ? convertedBytes(packTo, converting) : 0;
    const double loadShare =
        double(totalBytes) / double(std::max<uint64_t>(totalBytes + writeBytes, 1));

    std::atomic<size_t> hashed{remembered ? items.size() : 0}; // (no page waits for it)
    size_t started = 0;                                        // tensors whose conversion has begun
    bool stop = false;
    std::mutex mutex;
    std::condition_variable wake;
    std::thread hasher([&] {
        for (size_t i = 0; i < items.size() && !remembered; ++i) {
            {
                std::unique_lock<std::mutex> lock(mutex);
                wake.wait(lock, [&] { return stop || started > i; });
                if (stop)
                    return;
            }
            hash.update(items[i].matrix.data, items[i].stored->bytes());
            hashed.store(i + 1);
        }
    });
    auto setStarted = [&](size_t n, bool halt) {
        {
            std::lock_guard<std::mutex> lock(mutex);
            started = n;
            stop = stop || halt;
        }
        wake.notify_all();
    };
    struct Join { // stops and joins the hasher on every return
        std::thread& thread;
        std::function<void()> halt;
        ~Join() {
            if (thread.joinable()) {
                halt();
                thread.join();
            }
        }
    } join{hasher, [&] { setStarted(started, true); }};
    size_t dropped = 0;
    auto dropDone = [&](size_t converted) {
        for (const size_t n = std::min(converted, hashed.load()); dropped < n; ++dropped)
            if (!items[dropped].shared)
                items[dropped].file->dropPages(items[dropped].stored->begin,
                                               items[dropped].stored->end);
    };

    torch::NoGradGuard noGrad;
    uint64_t doneBytes = 0;
    for (size_t i = 0; i < items.size(); ++i) {
        if (cancel.cancelled())
            return makeError(ErrorCode::Cancelled, "loading was cancelled");
        Item& item = items[i];
        setStarted(i + 1, false);
        if (share && sharesMappedBytes(item.matrix, item.pack ? packTo : WeightFormat::F32)) {
            shareMapped(item.matrix, item.file->mapping(), item.param, item.pack);
            item.shared = true;
            out.mappedBytes += item.stored->bytes();
        } else if (item.pack != nullptr) {
            item.pack->packed = std::make_shared<const cpu::PackedMatrix>(
                kept ? kept->matrix(item.name) : loadPacked(item.matrix, packTo));
            item.param.set_(); // the float32 parameter is never touched
            out.keptBytes += kept ? item.pack->packed->view().bytes() : 0;
        } else {
            loadFloat(item.matrix, item.param.data_ptr<float>());
        }
        dropDone(i + 1);
        doneBytes += item.stored->bytes();
        if (progress &&
            !progress(loadShare * double(doneBytes) / double(std::max<uint64_t>(totalBytes, 1))))
            return makeError(ErrorCode::Cancelled, "loading was cancelled");
    }
    hasher.join();
    dropDone(items.size());
    out.storageDtype = dtypes.size() == 1 ? stDtypeName(*dtypes.begin()) : "mixed";
    out.contentHash = remembered ? *remembered : hash.hex();
    // (Remembered only if no file changed while it was read.)
    const bool remember =
        !remembered && memoKey && identityMemoKey(kContentHashRecipe, hashedPaths) == memoKey;
    if (remember)
        rememberIdentity(*memoKey, out.contentHash);
    if (writeBytes > 0 && (remembered || remember)) {
        std::vector<std::pair<std::string, const cpu::PackedMatrix*>> converted;
        for (const Item& item : items)
            if (item.pack != nullptr && !item.shared)
                converted.emplace_back(item.name, item.pack->packed.get());
        auto written =
            keepConvertedWeights(out.contentHash, folder, packTo, converted, [&](double f) {
                return !cancel.cancelled() &&
                       (!progress || progress(loadShare + (1.0 - loadShare) * f));
            });
        if (!written && written.error().code == ErrorCode::Cancelled)
            return makeError(ErrorCode::Cancelled, "loading was cancelled");
        if (!written)
            spdlog::warn("the converted weights of {} are not kept: {}", folder,
                         written.error().message);
    }
    return out;
}

Result<void> saveGpt2Weights(Gpt2Impl& net, const std::string& path, StDtype dtype,
                             const std::string& prefix) {
    if (net.packed())
        return makeError(ErrorCode::Unsupported,
                         "a model loaded with 8- or 16-bit weights (--weights) cannot be saved; "
                         "load it with f32 weights");
    torch::NoGradGuard noGrad;
    std::map<std::string, bool> conv;
    for (const auto& e : expectedGpt2Tensors(net.config()))
        conv[e.name] = e.conv1d;
    std::vector<std::pair<std::string, torch::Tensor>> named;
    for (auto& [name, param] : namedParameters(net)) {
        auto value = param.detach().to(torch::kCPU);
        named.emplace_back(prefix + name, conv.at(name) ? value.t() : value);
    }
    std::vector<torch::Tensor> keep;
    return writeSafetensors(path, toWriteList(named, dtype, keep), {{"format", "pt"}});
}

Result<std::optional<LoadedRecurrence>> loadRecurrence(const std::string& folder,
                                                       const ModelConfig& model,
                                                       const std::string& tokenizerIdentity) {
    const std::string jsonPath = files::join(folder, "baton.json");
    const std::string stPath = files::join(folder, "recurrence.safetensors");
    const bool hasJson = files::exists(jsonPath), hasWeights = files::exists(stPath);
    if (!hasJson && !hasWeights)
        return std::optional<LoadedRecurrence>(); // a baseline model
    if (!hasJson || !hasWeights)
        return makeError(ErrorCode::FileNotFound, "incomplete recurrent checkpoint in " + folder +
                                                      ": " + (hasJson ? stPath : jsonPath) +
                                                      " is missing");
    auto text = files::readAll(jsonPath, size_t(1) << 20);
    if (!text)
        return text.error();
    auto desc = parseBatonJson(*text, jsonPath, model);
    if (!desc)
        return desc.error();
    if (desc->tokenizerIdentity != tokenizerIdentity)
        return makeError(ErrorCode::TokenizerMismatch,
                         jsonPath + ": the recurrence module was trained with tokenizer " +
                             desc->tokenizerIdentity + " but this folder's tokenizer is " +
                             tokenizerIdentity);
    auto file = openSafetensors(stPath);
    if (!file)
        return file.error();
    const auto expected = expectedRecurrenceTensors(model, desc->recurrence);
    std::map<std::string, const StTensor*> found;
    for (const auto& t : file->tensors())
        found[t.name] = &t;
    for (const auto& [name, shape] : expected) {
        const auto it = found.find(name);
        if (it == found.end())
            return makeError(ErrorCode::ConfigMismatch,
                             stPath + " does not match baton.json: it has no " + name +
                                 " (baton.json implies shape " + shapeText(shape) + ")");
        if (it->second->shape != shape)
            return makeError(ErrorCode::ConfigMismatch,
                             stPath + " does not match baton.json: " + name + " has shape " +
                                 shapeText(it->second->shape) + ", baton.json implies " +
                                 shapeText(shape));
        const StDtype d = it->second->dtype;
        if (d != StDtype::F32 && d != StDtype::F16 && d != StDtype::BF16)
            return makeError(ErrorCode::Unsupported,
                             stPath + ": " + name + " is stored as " + stDtypeName(d));
        found.erase(it);
    }
    if (!found.empty())
        return makeError(ErrorCode::ConfigMismatch,
                         stPath + " does not match baton.json: unexpected tensor " +
                             found.begin()->first);

    LoadedRecurrence out;
    out.config = desc->recurrence;
    out.module = Recurrence(model, desc->recurrence);
    ContentHash hash;
    hash.update(*text);
    torch::NoGradGuard noGrad;
    for (auto& [name, param] : namedParameters(*out.module))
        if (auto r = readInto(*file, *file->find(name), param, hash); !r)
            return r.error();
    out.contentHash = hash.hex();
    return std::optional<LoadedRecurrence>(std::move(out));
}

Result<void> saveRecurrence(RecurrenceImpl& module, const std::string& folder,
                            const std::string& tokenizerIdentity, StDtype dtype) {
    torch::NoGradGuard noGrad;
    std::vector<std::pair<std::string, torch::Tensor>> named;
    for (auto& [name, param] : namedParameters(module))
        named.emplace_back(name, param.detach().to(torch::kCPU));
    std::vector<torch::Tensor> keep;
    if (auto r = writeSafetensors(files::join(folder, "recurrence.safetensors"),
                                  toWriteList(named, dtype, keep), {{"format", "baton"}});
        !r)
        return r;
    return files::writeAtomically(files::join(folder, "baton.json"),
                                  batonJsonText(module.config(), tokenizerIdentity));
}

Result<StDtype> storageDtype(const std::string& name) {
    if (name == "f32")
        return StDtype::F32;
    if (name == "f16")
        return StDtype::F16;
    if (name == "bf16")
        return StDtype::BF16;
    return makeError(ErrorCode::InvalidArgument,
                     "storage dtype must be f32, f16 or bf16, not " + name);
}

Result<void> copyTokenizerFiles(const std::string& fromDir, const std::string& toDir) {
    bool copied = false;
    for (const char* name : {"vocab.json", "merges.txt", "tokenizer.model"}) {
        const std::string src = files::join(fromDir, name);
        if (!files::exists(src))
            continue;
        auto data = files::readAll(src);
        if (!data)
            return data.error();
        if (auto r = files::writeAtomically(files::join(toDir, name), *data); !r)
            return r;
        copied = true;
    }
    if (!copied)
        return makeError(ErrorCode::FileNotFound, "no tokenizer files in " + fromDir);
    return {};
}

Result<void> saveAdapterFolder(RecurrenceImpl& module, const std::string& folder,
                               const std::string& tokenizerIdentity, StDtype dtype,
                               const std::string& baseIdentity, const std::string& baseName) {
    const std::string tmp = folder + ".partial";
    files::removeTree(tmp);
    if (!files::makeDirectories(tmp))
        return makeError(ErrorCode::FileWriteFailed, "cannot create " + tmp);
    if (auto r = saveRecurrence(module, tmp, tokenizerIdentity, dtype); !r)
        return r;
    const nlohmann::ordered_json j = {{"format", kAdapterFormat},
                                      {"version", 1},
                                      {"base_identity", baseIdentity},
                                      {"base_name", baseName}};
    if (auto r = files::writeAtomically(
            files::join(tmp, "adapter.json"),
            j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
        !r)
        return r;
    files::removeTree(folder);
    if (std::rename(tmp.c_str(), folder.c_str()) != 0)
        return makeError(ErrorCode::FileWriteFailed,
                         "cannot rename " + tmp + " to " + folder + ": " + std::strerror(errno));
    return {};
}

Result<void> saveModelFolder(Model::Impl& model, const std::string& folder, StDtype dtype,
                             const std::string& tokenizerSourceDir,
                             const std::string& tokenizerIdentity) {
    const std::string tmp = folder + ".partial";
    files::removeTree(tmp);
    if (!files::makeDirectories(tmp))
        return makeError(ErrorCode::FileWriteFailed, "cannot create " + tmp);
    if (auto r = files::writeAtomically(files::join(tmp, "config.json"),
                                        hfConfigJson(model.info.config));
        !r)
        return r;
    if (auto r = saveGpt2Weights(*model.net, files::join(tmp, "model.safetensors"), dtype); !r)
        return r;
    if (tokenizerIdentity.empty())
        if (auto r = copyTokenizerFiles(tokenizerSourceDir, tmp); !r)
            return r;
    if (model.recurrent()) {
        const std::string identity =
            tokenizerIdentity.empty() ? model.tokenizer->identity() : tokenizerIdentity;
        if (auto r = saveRecurrence(*model.recurrence, tmp, identity, dtype); !r)
            return r;
    }
    return files::replaceDirectory(tmp, folder);
}

} // namespace baton::engine
