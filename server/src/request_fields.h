// Reading request bodies: a body that is not what it should be becomes a RequestError,
// answered with its status (http_json.h writes the answer). The reading itself is
// Baton's one JSON reader (common/json.h); what is added here is what HTTP clients
// send that a file would not (200.0 for a count, -1 for "random seed", a string for a
// one-item list). Torch- and HTTP-free, so the fuzzing build reads request bodies
// exactly as the server does.
#pragma once

#include <baton/common/json.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace baton::server {

class RequestError : public std::runtime_error {
public:
    RequestError(int status, const std::string& message)
        : std::runtime_error(message)
        , m_status(status) {}
    int status() const { return m_status; }

private:
    int m_status;
};

// The body as a JSON object: 400 for invalid UTF-8, invalid JSON (with why) or
// another type.
json::Json parseJsonObject(std::string_view body);

// Typed optional fields of a JSON object: absent or null gives nullopt; a wrong type or
// a value out of range is a 400 naming the field and the value.
class Fields {
public:
    explicit Fields(const json::Json& object)
        : m_object(object) {}
    bool has(const char* name) const;
    std::optional<std::string> string(const char* name) const;
    std::optional<bool> boolean(const char* name) const;
    std::optional<double> number(const char* name, double lo, double hi) const;
    std::optional<int64_t> integer(const char* name, int64_t lo, int64_t hi) const;
    // A count any number gives, its fraction dropped (KoboldAI Lite sends the sliders'
    // values unrounded, and KoboldCpp reads them with int()); then checked as integer().
    std::optional<int64_t> whole(const char* name, int64_t lo, int64_t hi) const;
    // A sampler seed: any number; nullopt when absent or negative (-1: "random", as
    // clients send it). Seeds beyond 64 bits (SillyTavern sends 2^64 as a double) are
    // taken from the number's bits, so the same seed always gives the same text.
    std::optional<uint64_t> seed(const char* name) const;
    // A string or an array of at most maxCount non-empty strings.
    std::vector<std::string> strings(const char* name, size_t maxCount) const;

private:
    const json::Json* field(const char* name) const;
    // Reads the field with the common reader; a 400 with its message when it fails.
    template <typename T, typename Read>
    std::optional<T> read(const char* name, Read&& read) const;
    const json::Json& m_object;
};

} // namespace baton::server
