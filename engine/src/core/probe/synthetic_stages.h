// The curriculum stages of a synthetic run as JSON: written into the report and into a
// checkpoint's progress, read back from either (synthetic_task.cpp).
#pragma once

#include "baton/engine/synthetic.h"
#include "util/json.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace baton::engine {

nlohmann::ordered_json syntheticStagesJson(const std::vector<SyntheticStage>& stages);
// The stages in object[key] (none when it is absent); an error naming the field that is
// wrong.
Result<std::vector<SyntheticStage>> readSyntheticStages(const json::Json& object, const char* key);

} // namespace baton::engine
