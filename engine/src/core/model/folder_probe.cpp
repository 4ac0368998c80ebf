#include "baton/engine/model.h"

#include "model/baton_json.h"
#include "model/hf_config.h"
#include "util/files.h"

#include <baton/common/json.h>

#include <dirent.h>
#include <sys/stat.h>

namespace baton::engine {

namespace {

int64_t folderBytes(const std::string& folder) {
    int64_t bytes = 0;
    if (DIR* dir = ::opendir(folder.c_str())) {
        while (dirent* e = ::readdir(dir)) {
            struct stat st {};
            if (::stat(files::join(folder, e->d_name).c_str(), &st) == 0 && S_ISREG(st.st_mode))
                bytes += st.st_size;
        }
        ::closedir(dir);
    }
    return bytes;
}

// The recurrence a folder's baton.json describes for a model of this shape.
Result<std::optional<RecurrenceConfig>> readRecurrence(const std::string& folder,
                                                       const ModelConfig& config) {
    const std::string batonPath = files::join(folder, "baton.json");
    if (!files::exists(batonPath))
        return std::optional<RecurrenceConfig>();
    auto text = files::readAll(batonPath, size_t(1) << 20);
    if (!text)
        return text.error();
    auto desc = parseBatonJson(*text, batonPath, config);
    if (!desc)
        return desc.error();
    return std::optional<RecurrenceConfig>(desc->recurrence);
}

} // namespace

Result<AdapterBase> readAdapterBase(const std::string& folder) {
    const std::string path = files::join(folder, "adapter.json");
    auto text = files::readAll(path, size_t(1) << 20);
    if (!text)
        return text.error();
    std::string why;
    auto j = json::parse(*text, &why);
    if (!j || json::stringOrEmpty(*j, "format") != kAdapterFormat)
        return makeError(ErrorCode::BadConfig,
                         path + " is not a Baton recurrence adapter" +
                             (why.empty() ? std::string() : " (" + why + ")"));
    AdapterBase base;
    base.identity = json::stringOrEmpty(*j, "base_identity");
    base.name = json::stringOrEmpty(*j, "base_name");
    if (base.identity.empty())
        return makeError(ErrorCode::BadConfig, path + " does not name its base model");
    return base;
}

ModelFolderSummary probeModelFolder(const std::string& folder, const std::string& adapter) {
    ModelFolderSummary s;
    s.path = folder;
    auto config = readHfConfig(files::join(folder, "config.json"));
    if (!config) {
        s.error = config.error().message;
        return s;
    }
    s.present = true;
    s.config = *config;
    if (adapter.empty()) {
        if (auto r = readRecurrence(folder, s.config))
            s.recurrence = *r;
        else
            s.error = r.error().message;
        s.bytes = folderBytes(folder);
        return s;
    }
    s.bytes = folderBytes(adapter);
    s.present = false;
    if (auto base = readAdapterBase(adapter); !base) {
        s.error = base.error().message;
    } else if (auto r = readRecurrence(adapter, s.config); !r) {
        s.error = r.error().message;
    } else if (!*r) {
        s.error = adapter + " holds no recurrence module";
    } else {
        s.present = true;
        s.recurrence = *r;
    }
    return s;
}

} // namespace baton::engine
