#include "training/run_output.h"

#include "model/checkpoint.h"
#include "util/files.h"

namespace baton::engine {

namespace {

// The base's folder name, or its run's for a run's output (RUN/model or RUN/best).
std::string baseName(std::string path) {
    while (!path.empty() && path.back() == '/')
        path.pop_back();
    const size_t slash = path.find_last_of('/');
    std::string last = path.substr(slash + 1);
    if ((last == "model" || last == "best") && slash != std::string::npos && slash > 0)
        last = path.substr(0, slash).substr(path.find_last_of('/', slash - 1) + 1);
    return last;
}

} // namespace

std::string runOutputDir(const TrainConfig& c) {
    return files::join(c.outDir, c.adapter ? "adapter" : "model");
}

Result<void> writeRunOutput(const TrainConfig& c, const std::shared_ptr<Model>& last,
                            const std::string& lastTokenizerDir, const std::string& bestDir) {
    auto dtype = storageDtype(c.saveDtype);
    if (!dtype)
        return dtype.error();
    std::shared_ptr<Model> source = last;
    std::string tokenizerDir = lastTokenizerDir;
    if (!bestDir.empty()) {
        auto best = Model::load(bestDir);
        if (!best)
            return best.error();
        source = *best;
        tokenizerDir = bestDir;
    }
    if (!c.adapter)
        return saveModelFolder(ModelAccess::of(*source), runOutputDir(c), *dtype, tokenizerDir);
    // The module alone, with the identity of the base it was trained on.
    auto base = files::readAll(files::join(c.outDir, "adapter_base"), 4096);
    if (!base)
        return base.error();
    Model::Impl& m = ModelAccess::of(*source);
    return saveAdapterFolder(*m.recurrence, runOutputDir(c), m.tokenizer->identity(), *dtype, *base,
                             baseName(c.baseModel));
}

} // namespace baton::engine
