#include "training/run_progress.h"

#include "util/files.h"
#include "util/json.h"

#include <cstdio>
#include <limits>

namespace baton::engine {

std::string checkpointName(int64_t step) {
    char name[32];
    std::snprintf(name, sizeof(name), "step-%09lld", static_cast<long long>(step));
    return name;
}

bool isCheckpointName(const std::string& name) {
    if (name.size() < 6 || name.size() > 25 || name.compare(0, 5, "step-") != 0)
        return false;
    for (size_t i = 5; i < name.size(); ++i)
        if (name[i] < '0' || name[i] > '9')
            return false;
    return true;
}

std::string latestCheckpoint(const std::string& outDir) {
    auto name = files::readAll(files::join(outDir, "LATEST"), 4096);
    if (!name)
        return {};
    std::string n = *name;
    while (!n.empty() && (n.back() == '\n' || n.back() == ' '))
        n.pop_back();
    if (!isCheckpointName(n))
        return {}; // "../elsewhere" or garbage: never leave the run's folder
    const std::string dir = files::join(files::join(outDir, "checkpoints"), n);
    return files::isDirectory(dir) ? dir : std::string();
}

std::string progressText(const RunProgress& p) {
    nlohmann::ordered_json j;
    j["step"] = p.step;
    j["tokens"] = p.tokens;
    j["epoch"] = p.epoch;
    j["position"] = p.position;
    j["next_validation"] = p.nextValidation;
    j["have_best"] = p.haveBest;
    j["best_val"] = p.bestVal;
    j["since_best"] = p.sinceBest;
    j["total_steps"] = p.totalSteps;
    return j.dump(2);
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
