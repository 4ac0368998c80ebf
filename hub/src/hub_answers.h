// The hub's HTTP conventions shared by its file list and its downloads: percent-encoding
// of URL parts, the token's header, and what a refused answer means (X-Error-Code and
// X-Error-Message, as huggingface_hub reads them: hub/README.md).
#pragma once

#include "baton/hub/hub.h"
#include "http.h"

#include <string>
#include <vector>

namespace baton::hub {

HubError fail(HubErrorCode code, std::string message, long status = 0);
// Percent-encodes everything but unreserved characters (and '/' when keepSlash).
std::string encode(const std::string& s, bool keepSlash);
// "Authorization: Bearer TOKEN" when there is a token.
std::vector<std::string> headersFor(const HubOptions& options);
// What a failed answer means, in the hub's words where it gave them.
HubError answerError(const HttpResponse& response, const std::string& what);
bool isHex(const std::string& s, size_t n);
// "what: strerror(err)".
std::string errnoText(const std::string& what, int err);

} // namespace baton::hub
