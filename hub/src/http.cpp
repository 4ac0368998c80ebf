#include "http.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>

namespace baton::hub {

namespace {

void initOnce() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
    const HttpGet* request = nullptr;
    const engine::CancelToken* cancel = nullptr;
    CURL* curl = nullptr;
    HttpResponse response;
    int64_t received = 0;
    int64_t total = -1;
    bool started = false; // the final answer's body has begun
};

bool success(long status) {
    return status >= 200 && status < 300;
}

size_t onHeader(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t n = size * count;
    std::string line(data, n);
    while (!line.empty() && (line.back() == '\r' || line.back() == '\n'))
        line.pop_back();
    if (line.rfind("HTTP/", 0) == 0) { // a new response (after a redirect): its own headers
        t->response.headers.clear();
        t->received = 0;
        t->total = -1;
        t->started = false;
        return n;
    }
    const size_t colon = line.find(':');
    if (colon == std::string::npos)
        return n;
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    size_t from = colon + 1;
    while (from < line.size() && (line[from] == ' ' || line[from] == '\t'))
        ++from;
    t->response.headers[name] = line.substr(from);
    if (name == "content-length")
        t->total = std::strtoll(line.c_str() + from, nullptr, 10);
    return n;
}

size_t onBody(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t n = size * count;
    if (t->cancel->cancelled()) { // at once, not at the next progress call
        t->response.cancelled = true;
        return 0;
    }
    long status = 0;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    if (!success(status) || !t->request->sink) {
        // An error's explanation, or a small document: kept, within reason.
        if (t->response.body.size() < (64u << 20))
            t->response.body.append(data, n);
    } else if (!t->started && (t->started = true) && t->request->onResponse &&
               !t->request->onResponse(status, t->response.headers)) {
        t->response.sinkFailed = true;
        return 0;
    } else if (!t->request->sink(data, n)) {
        t->response.sinkFailed = true;
        return 0; // CURLE_WRITE_ERROR
    }
    t->received += int64_t(n);
    if (t->request->progress && success(status))
        t->request->progress(t->received, t->total);
    return n;
}

int onProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    auto* t = static_cast<Transfer*>(user);
    return t->cancel->cancelled() ? 1 : 0; // non-zero aborts (CURLE_ABORTED_BY_CALLBACK)
}

} // namespace

HttpResponse httpGet(const HttpGet& request, const engine::CancelToken& cancel) {
    initOnce();
    Transfer t;
    t.request = &request;
    t.cancel = &cancel;
    std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
    if (!curl) {
        t.response.error = "libcurl could not start a transfer";
        return t.response;
    }
    t.curl = curl.get();
    curl_slist* headers = nullptr;
    for (const std::string& h : request.headers)
        headers = curl_slist_append(headers, h.c_str());
    std::unique_ptr<curl_slist, void (*)(curl_slist*)> headerList(headers, curl_slist_free_all);
    CURL* c = curl.get();
    curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
    // A transfer that moves less than a byte a second for a minute has stalled.
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, request.userAgent.c_str());
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, onHeader);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, onBody);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, onProgress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);
    const std::string range =
        request.rangeFrom >= 0 ? std::to_string(request.rangeFrom) + "-" : std::string();
    if (!range.empty())
        curl_easy_setopt(c, CURLOPT_RANGE, range.c_str());
    char message[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, message);
    const CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &t.response.status);
    if (rc == CURLE_ABORTED_BY_CALLBACK)
        t.response.cancelled = true;
    else if (rc != CURLE_OK && !t.response.sinkFailed && !t.response.cancelled)
        t.response.error = message[0] ? message : curl_easy_strerror(rc);
    return t.response;
}

} // namespace baton::hub
