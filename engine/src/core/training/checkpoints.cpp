#include "training/checkpoints.h"

#include "model/checkpoint.h"
#include "util/files.h"
#include "util/json.h"

#include <limits>

#include <algorithm>
#include <cstdio>
#include <dirent.h>

namespace baton::engine {

namespace {

using Json = nlohmann::ordered_json;

void pruneCheckpoints(const std::string& outDir, int keep) {
    const std::string root = files::join(outDir, "checkpoints");
    std::vector<std::string> names;
    if (DIR* dir = ::opendir(root.c_str())) {
        while (dirent* e = ::readdir(dir)) {
            const std::string n = e->d_name;
            if (n.rfind("step-", 0) == 0 && n.find('.') == std::string::npos)
                names.push_back(n);
            else if (n.find(".partial") != std::string::npos)
                files::removeTree(files::join(root, n)); // left by an interrupted write
        }
        ::closedir(dir);
    }
    std::sort(names.begin(), names.end());
    while (int(names.size()) > std::max(1, keep)) {
        files::removeTree(files::join(root, names.front()));
        names.erase(names.begin());
    }
}

} // namespace

std::string latestCheckpoint(const std::string& outDir) {
    auto name = files::readAll(files::join(outDir, "LATEST"), 4096);
    if (!name)
        return {};
    std::string n = *name;
    while (!n.empty() && (n.back() == '\n' || n.back() == ' '))
        n.pop_back();
    const std::string dir = files::join(files::join(outDir, "checkpoints"), n);
    return files::isDirectory(dir) ? dir : std::string();
}

Result<std::string> writeCheckpoint(const std::string& outDir, int keep, Model::Impl& model,
                                    const std::string& tokenizerDir, const AdamOptimizer& optimizer,
                                    const RunProgress& p) {
    char name[32];
    std::snprintf(name, sizeof(name), "step-%09lld", static_cast<long long>(p.step));
    const std::string root = files::join(outDir, "checkpoints");
    files::makeDirectories(root);
    const std::string dir = files::join(root, name);
    // The model folder first (written beside and renamed into place), then the
    // optimizer and progress files inside it; LATEST moves only when all is there.
    if (auto r = saveModelFolder(model, dir, StDtype::F32, tokenizerDir); !r)
        return r.error();
    if (auto r = optimizer.save(files::join(dir, "optimizer.safetensors")); !r)
        return r.error();
    Json j;
    j["step"] = p.step;
    j["tokens"] = p.tokens;
    j["epoch"] = p.epoch;
    j["position"] = p.position;
    j["next_validation"] = p.nextValidation;
    j["have_best"] = p.haveBest;
    j["best_val"] = p.bestVal;
    j["since_best"] = p.sinceBest;
    j["total_steps"] = p.totalSteps;
    if (auto r = files::writeAtomically(files::join(dir, "trainer.json"), j.dump(2)); !r)
        return r.error();
    files::syncDirectory(dir);
    if (auto r = files::writeAtomically(files::join(outDir, "LATEST"), std::string(name) + "\n");
        !r)
        return r.error();
    pruneCheckpoints(outDir, keep);
    return dir;
}

Result<RunProgress> readProgress(const std::string& dir) {
    const std::string path = files::join(dir, "trainer.json");
    auto j = readJsonFile(path, size_t(1) << 20);
    if (!j)
        return j.error();
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    RunProgress p;
    json::FieldReader f(*j);
    f.integer("step", 0, kMax, p.step, f.Required);
    f.integer("tokens", 0, kMax, p.tokens, f.Required);
    f.integer("epoch", 0, kMax, p.epoch, f.Required);
    f.integer("position", 0, kMax, p.position, f.Required);
    f.integer("next_validation", 0, kMax, p.nextValidation, f.Required);
    f.boolean("have_best", p.haveBest, f.Required);
    f.number("best_val", -std::numeric_limits<double>::max(), std::numeric_limits<double>::max(),
             p.bestVal, f.Required);
    f.integer("since_best", 0, std::numeric_limits<int>::max(), p.sinceBest, f.Required);
    f.integer("total_steps", 0, kMax, p.totalSteps);
    if (!f.ok())
        return makeError(ErrorCode::BadConfig, path + " is damaged: " + f.error());
    return p;
}

} // namespace baton::engine
