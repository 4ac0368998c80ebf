#include "http_json.h"

#include <chrono>
#include <random>

namespace baton::server {

using json = nlohmann::ordered_json;

std::string dumpJson(const json& value) {
    return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

json errorJson(int status, const std::string& message) {
    const char* type = status == 401   ? "authentication_error"
                       : status == 404 ? "not_found_error"
                       : status == 413 ? "request_too_large"
                       : status == 503 ? "server_busy"
                       : status >= 500 ? "server_error"
                                       : "invalid_request_error";
    // "detail" as KoboldCpp answers: KoboldAI clients show detail.msg, and KoboldAI Lite
    // offers to abort on "service_unavailable".
    return json{
        {"error", {{"message", message}, {"type", type}, {"code", status}}},
        {"detail",
         {{"msg", message}, {"type", status == 503 ? "service_unavailable" : "bad_input"}}}};
}

void sendJson(httplib::Response& response, const json& value, int status) {
    response.status = status;
    response.set_content(dumpJson(value), "application/json");
}

void sendError(httplib::Response& response, int status, const std::string& message) {
    sendJson(response, errorJson(status, message), status);
}

std::string randomId(const char* prefix) {
    static const char* hex = "0123456789abcdef";
    std::random_device rd;
    std::string id = prefix;
    for (int i = 0; i < 24; ++i)
        id += hex[rd() % 16];
    return id;
}

int64_t unixTime() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace baton::server
