#include <baton/app/paths.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

namespace baton::app {

std::string bundledModelDir(const std::string& name) {
    namespace fs = std::filesystem;
    std::vector<fs::path> roots;
    if (const char* env = std::getenv("BATON_MODELS_DIR"); env && *env)
        roots.emplace_back(env);
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec)
        roots.push_back(exe.parent_path().parent_path() / "share" / "baton" / "models");
#ifdef BATON_RESOURCES_DIR
    roots.emplace_back(fs::path(BATON_RESOURCES_DIR) / "models");
#endif
    for (const auto& r : roots)
        if (fs::exists(r / name / "config.json", ec))
            return (r / name).string();
    return {};
}

std::vector<std::string> bundledModelDirs() {
    std::vector<std::string> out;
    for (const char* name : {kDefaultModel, "baton-mini-baseline"})
        if (std::string dir = bundledModelDir(name); !dir.empty())
            out.push_back(dir);
    return out;
}

namespace {

// $VAR/baton (when the variable VAR is an absolute path), else ~/FALLBACK/baton; ""
// when neither is set.
std::string xdgFolder(const char* var, const char* fallback) {
    if (const char* xdg = std::getenv(var); xdg && *xdg == '/')
        return std::string(xdg) + "/baton";
    if (const char* home = std::getenv("HOME"); home && *home)
        return std::string(home) + "/" + fallback + "/baton";
    return {};
}

std::string dataFolder() {
    return xdgFolder("XDG_DATA_HOME", ".local/share");
}

// $XDG_CACHE_HOME/baton/NAME, else ~/.cache/baton/NAME; "" when neither is set.
std::string cacheFolder(const char* name) {
    const std::string base = xdgFolder("XDG_CACHE_HOME", ".cache");
    return base.empty() ? base : base + "/" + name;
}

} // namespace

std::string modelIdentityMemoFolder() {
    return cacheFolder("model-ids");
}

std::string convertedWeightsCacheFolder() {
    return cacheFolder("converted-weights");
}

std::string defaultDatabasePath() {
    const std::string base = dataFolder();
    return base.empty() ? base : base + "/baton.db";
}

std::string defaultModelsFolder() {
    const std::string base = dataFolder();
    return base.empty() ? base : base + "/models";
}

std::string makeParentFolders(const std::string& file) {
    for (size_t pos = 1; (pos = file.find('/', pos)) != std::string::npos; ++pos) {
        const std::string dir = file.substr(0, pos);
        if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
            return "cannot create the folder " + dir + ": " + std::strerror(errno);
    }
    return {};
}

} // namespace baton::app
