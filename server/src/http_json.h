// Writing answers as JSON, for both APIs: a RequestError (request_fields.h) is answered
// with its status, {"error": {"message", "type", "code"}} (the shape OpenAI clients
// read) and {"detail": {"msg", "type"}} (KoboldCpp's, which KoboldAI clients read).
#pragma once

#include "request_fields.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace baton::server {

// Serialises with invalid UTF-8 (a token that is part of a character) replaced.
std::string dumpJson(const nlohmann::ordered_json& value);
void sendJson(httplib::Response& response, const nlohmann::ordered_json& value, int status = 200);
void sendError(httplib::Response& response, int status, const std::string& message);
// The error object sendError writes, for answers already under way.
nlohmann::ordered_json errorJson(int status, const std::string& message);

// An answer's id: the prefix and 24 random hex digits ("cmpl-...", "chatcmpl-...").
std::string randomId(const char* prefix);
// Seconds since 1970 (OpenAI's "created").
int64_t unixTime();

} // namespace baton::server
