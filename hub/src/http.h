// One HTTP GET over libcurl, for the hub client: redirects followed (an LFS file moves
// to a CDN on another host, where libcurl does not send the Authorization header), the
// proxy variables honoured (http_proxy, https_proxy, no_proxy: libcurl reads them),
// a stalled transfer given up after a minute, the final response's status and headers
// kept, and its body handed to a sink (a 2xx answer) or kept as text (any other).
#pragma once

#include <baton/engine/cancel.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace baton::hub {

struct HttpResponse {
    long status = 0;
    std::map<std::string, std::string> headers; // the final response's, names in lower case
    std::string body;                           // when there was no sink, or not a 2xx answer
    std::string error;                          // the transfer failed: why ("" otherwise)
    bool cancelled = false;
    bool sinkFailed = false; // the sink refused bytes (a write failed)
};

struct HttpGet {
    std::string url;
    std::vector<std::string> headers; // "Name: value"
    std::string userAgent;
    int64_t rangeFrom = -1; // >= 0: ask for the bytes from there on (Range: bytes=N-)
    // Called once a 2xx answer's body starts (its status and headers); false stops the
    // transfer (sinkFailed).
    std::function<bool(long status, const std::map<std::string, std::string>& headers)> onResponse;
    // Receives a 2xx answer's body; false stops the transfer (sinkFailed).
    std::function<bool(const char* data, size_t size)> sink;
    // Bytes received so far of this answer and its announced length (-1: unknown).
    std::function<void(int64_t received, int64_t total)> progress;
};

HttpResponse httpGet(const HttpGet& request, const engine::CancelToken& cancel);

} // namespace baton::hub
