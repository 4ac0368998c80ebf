// The engine's door to baton::json (common/json.h): text to a JSON value, with the
// engine's error codes (InvalidUtf8 with the byte, InvalidJson with the reason) and
// the file named in the message.
#pragma once

#include "baton/engine/error.h"

#include <baton/common/json.h>

#include <string>
#include <string_view>

namespace baton::engine {

Result<json::Json> parseJson(std::string_view text, const std::string& path);
// Reads and parses a file of at most maxBytes.
Result<json::Json> readJsonFile(const std::string& path, size_t maxBytes);

} // namespace baton::engine
