#include "hub_answers.h"

#include <baton/common/json.h>

#include <cctype>
#include <cstring>

namespace baton::hub {

namespace {

std::string header(const HttpResponse& r, const char* name) {
    const auto it = r.headers.find(name);
    return it == r.headers.end() ? std::string() : it->second;
}

} // namespace

HubError fail(HubErrorCode code, std::string message, long status) {
    return HubError{code, std::move(message), status};
}

std::string encode(const std::string& s, bool keepSlash) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
            (keepSlash && c == '/')) {
            out += char(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

std::vector<std::string> headersFor(const HubOptions& o) {
    std::vector<std::string> h;
    if (!o.token.empty())
        h.push_back("Authorization: Bearer " + o.token);
    return h;
}

HubError answerError(const HttpResponse& r, const std::string& what) {
    if (r.cancelled)
        return fail(HubErrorCode::Cancelled, "cancelled");
    if (!r.error.empty())
        return fail(HubErrorCode::Network, what + ": " + r.error);
    const std::string code = header(r, "x-error-code");
    std::string said = header(r, "x-error-message");
    if (said.empty())
        if (auto body = json::parse(r.body, nullptr); body && body->is_object())
            said = json::stringOrEmpty(*body, "error");
    const std::string detail = said.empty() ? std::string() : " (the hub says: " + said + ")";
    const long s = r.status;
    if (code == "GatedRepo")
        return fail(HubErrorCode::Unauthorized,
                    what +
                        ": the repository is gated; accept its conditions on the hub and set "
                        "HF_TOKEN to a token of that account" +
                        detail,
                    s);
    if (code == "RepoNotFound" ||
        (s == 401 && said != "Invalid credentials in Authorization header"))
        return fail(s == 401 ? HubErrorCode::Unauthorized : HubErrorCode::NotFound,
                    what +
                        ": no such repository, or it is private (set HF_TOKEN to a token "
                        "with access)" +
                        detail,
                    s);
    if (code == "RevisionNotFound")
        return fail(HubErrorCode::NotFound, what + ": no such revision" + detail, s);
    if (code == "EntryNotFound" || s == 404)
        return fail(HubErrorCode::NotFound, what + ": not found" + detail, s);
    if (s == 401 || s == 403)
        return fail(HubErrorCode::Unauthorized,
                    what + ": access refused (HTTP " + std::to_string(s) + ")" + detail, s);
    return fail(s >= 500 ? HubErrorCode::Network : HubErrorCode::BadResponse,
                what + ": HTTP " + std::to_string(s) + detail, s);
}

bool isHex(const std::string& s, size_t n) {
    return s.size() == n && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::string errnoText(const std::string& what, int err) {
    return what + ": " + std::strerror(err);
}

} // namespace baton::hub
