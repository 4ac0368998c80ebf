#include "training/checkpoints.h"

#include "model/checkpoint.h"
#include "util/files.h"

#include <algorithm>
#include <dirent.h>

namespace baton::engine {

namespace {

void pruneCheckpoints(const std::string& outDir, int keep) {
    const std::string root = files::join(outDir, "checkpoints");
    std::vector<std::string> names;
    if (DIR* dir = ::opendir(root.c_str())) {
        while (dirent* e = ::readdir(dir)) {
            const std::string n = e->d_name;
            if (isCheckpointName(n))
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

Result<std::string> writeCheckpoint(const std::string& outDir, int keep, Model::Impl& model,
                                    const std::string& tokenizerDir, const AdamOptimizer& optimizer,
                                    const RunProgress& p) {
    const std::string name = checkpointName(p.step);
    const std::string root = files::join(outDir, "checkpoints");
    files::makeDirectories(root);
    const std::string dir = files::join(root, name);
    // The model folder first (written beside and renamed into place), then the
    // optimizer and progress files inside it; LATEST moves only when all is there.
    if (auto r = saveModelFolder(model, dir, StDtype::F32, tokenizerDir); !r)
        return r.error();
    if (auto r = optimizer.save(files::join(dir, "optimizer.safetensors")); !r)
        return r.error();
    if (auto r = files::writeAtomically(files::join(dir, "trainer.json"), progressText(p)); !r)
        return r.error();
    files::syncDirectory(dir);
    if (auto r = files::writeAtomically(files::join(outDir, "LATEST"), name + "\n"); !r)
        return r.error();
    pruneCheckpoints(outDir, keep);
    return dir;
}

} // namespace baton::engine
