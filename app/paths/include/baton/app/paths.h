// Paths shared by Baton's two composition roots (baton-cli and the baton app): the
// bundled models, the default story database and the cache. Plain C++, no Qt.
#pragma once

#include <string>
#include <vector>

namespace baton::app {

// The bundled model used when nothing else is chosen.
constexpr const char* kDefaultModel = "baton-mini";

// The folder of a model bundled with Baton (resources/models/NAME), or "" when it is
// not installed. Looks in $BATON_MODELS_DIR, then beside the executable
// (../share/baton/models), then in the source tree the executable was built from.
std::string bundledModelDir(const std::string& name);
// The folders of the bundled models that are installed, the default one first.
std::vector<std::string> bundledModelDirs();

// $XDG_DATA_HOME/baton/baton.db (when XDG_DATA_HOME is absolute), else
// ~/.local/share/baton/baton.db; "" when neither HOME nor XDG_DATA_HOME is set.
std::string defaultDatabasePath();
// $XDG_DATA_HOME/baton/models (or ~/.local/share/baton/models): where downloaded models
// go; "" when neither HOME nor XDG_DATA_HOME is set.
std::string defaultModelsFolder();

// $XDG_CACHE_HOME/baton/model-ids (when XDG_CACHE_HOME is absolute), else
// ~/.cache/baton/model-ids: where loaded models' content hashes are remembered
// (rememberModelIdentitiesIn); "" when neither HOME nor XDG_CACHE_HOME is set.
std::string modelIdentityMemoFolder();
// $XDG_CACHE_HOME/baton/converted-weights (when XDG_CACHE_HOME is absolute), else
// ~/.cache/baton/converted-weights: where weights converted while loading are kept
// (keepConvertedWeightsIn); "" when neither HOME nor XDG_CACHE_HOME is set.
std::string convertedWeightsCacheFolder();

// mkdir -p for the folder that holds `file`; "" on success, else what failed.
std::string makeParentFolders(const std::string& file);

} // namespace baton::app
