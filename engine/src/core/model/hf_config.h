// Hugging Face GPT-2 config.json: parsed, validated, written.
#pragma once

#include "baton/engine/error.h"
#include "baton/engine/model_info.h"

#include <string>

namespace baton::engine {

Result<ModelConfig> parseHfConfig(std::string_view json, const std::string& pathForMessages);
Result<ModelConfig> readHfConfig(const std::string& path);
// Structural checks shared by parsing and by configurations built in code.
Result<void> validateModelConfig(const ModelConfig& config);
std::string hfConfigJson(const ModelConfig& config);

} // namespace baton::engine
