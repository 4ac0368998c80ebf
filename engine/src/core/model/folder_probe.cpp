#include "baton/engine/model.h"

#include "model/baton_json.h"
#include "model/hf_config.h"
#include "util/files.h"

#include <dirent.h>
#include <sys/stat.h>

namespace baton::engine {

ModelFolderSummary probeModelFolder(const std::string& folder) {
    ModelFolderSummary s;
    s.path = folder;
    auto config = readHfConfig(files::join(folder, "config.json"));
    if (!config) {
        s.error = config.error().message;
        return s;
    }
    s.present = true;
    s.config = *config;
    const std::string batonPath = files::join(folder, "baton.json");
    if (files::exists(batonPath)) {
        auto text = files::readAll(batonPath, size_t(1) << 20);
        auto desc =
            text ? parseBatonJson(*text, batonPath, s.config) : Result<BatonJson>(text.error());
        if (desc)
            s.recurrence = desc->recurrence;
        else
            s.error = desc.error().message;
    }
    if (DIR* dir = ::opendir(folder.c_str())) {
        while (dirent* e = ::readdir(dir)) {
            struct stat st {};
            if (::stat(files::join(folder, e->d_name).c_str(), &st) == 0 && S_ISREG(st.st_mode))
                s.bytes += st.st_size;
        }
        ::closedir(dir);
    }
    return s;
}

} // namespace baton::engine
