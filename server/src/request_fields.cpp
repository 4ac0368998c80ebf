#include "request_fields.h"

#include <baton/engine/text.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace baton::server {

using json = nlohmann::ordered_json;

json parseJsonObject(std::string_view body) {
    if (const size_t bad = engine::firstInvalidUtf8(body); bad != std::string::npos)
        throw RequestError(400, "the request body is not valid UTF-8 (byte " + std::to_string(bad) +
                                    ")");
    json object = json::parse(body, nullptr, false);
    if (object.is_discarded())
        throw RequestError(400, "the request body is not valid JSON");
    if (!object.is_object())
        throw RequestError(400, "the request body must be a JSON object");
    return object;
}

const json* Fields::field(const char* name) const {
    auto it = m_object.find(name);
    return it == m_object.end() || it->is_null() ? nullptr : &*it;
}

bool Fields::has(const char* name) const {
    return field(name) != nullptr;
}

std::optional<std::string> Fields::string(const char* name) const {
    const json* f = field(name);
    if (!f)
        return std::nullopt;
    if (!f->is_string())
        throw RequestError(400, std::string("'") + name + "' must be a string");
    return f->get<std::string>();
}

std::optional<bool> Fields::boolean(const char* name) const {
    const json* f = field(name);
    if (!f)
        return std::nullopt;
    if (!f->is_boolean())
        throw RequestError(400, std::string("'") + name + "' must be true or false");
    return f->get<bool>();
}

std::optional<double> Fields::number(const char* name, double lo, double hi) const {
    const json* f = field(name);
    if (!f)
        return std::nullopt;
    if (!f->is_number())
        throw RequestError(400, std::string("'") + name + "' must be a number");
    const double v = f->get<double>();
    if (!std::isfinite(v) || v < lo || v > hi)
        throw RequestError(400, std::string("'") + name + "' must be in [" + json(lo).dump() +
                                    ", " + json(hi).dump() + "]");
    return v;
}

std::optional<int64_t> Fields::integer(const char* name, int64_t lo, int64_t hi) const {
    const json* f = field(name);
    if (!f)
        return std::nullopt;
    int64_t v = 0;
    if (f->is_number_integer())
        v = f->get<int64_t>();
    else if (f->is_number_float() && std::isfinite(f->get<double>()) &&
             std::floor(f->get<double>()) == f->get<double>() && std::fabs(f->get<double>()) < 9e15)
        v = static_cast<int64_t>(f->get<double>()); // 200.0 from JavaScript clients
    else
        throw RequestError(400, std::string("'") + name + "' must be an integer");
    if (v < lo || v > hi)
        throw RequestError(400, std::string("'") + name + "' must be in [" + std::to_string(lo) +
                                    ", " + std::to_string(hi) + "]");
    return v;
}

std::optional<int64_t> Fields::whole(const char* name, int64_t lo, int64_t hi) const {
    const json* f = field(name);
    if (f && f->is_number_float()) {
        const double v = f->get<double>();
        if (!std::isfinite(v) || v < double(lo) || v >= double(hi) + 1)
            throw RequestError(400, std::string("'") + name + "' must be in [" +
                                        std::to_string(lo) + ", " + std::to_string(hi) + "]");
        return std::clamp(static_cast<int64_t>(std::trunc(v)), lo, hi);
    }
    return integer(name, lo, hi);
}

std::optional<uint64_t> Fields::seed(const char* name) const {
    const json* f = field(name);
    if (!f)
        return std::nullopt;
    if (f->is_number_unsigned())
        return f->get<uint64_t>();
    if (f->is_number_integer())
        return f->get<int64_t>() < 0 ? std::nullopt : std::optional<uint64_t>(f->get<int64_t>());
    if (!f->is_number_float() || !std::isfinite(f->get<double>()))
        throw RequestError(400, std::string("'") + name + "' must be a number");
    const double v = std::trunc(f->get<double>());
    if (v < 0)
        return std::nullopt;
    if (v < 18446744073709551616.0)
        return static_cast<uint64_t>(v);
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    return bits;
}

std::vector<std::string> Fields::strings(const char* name, size_t maxCount) const {
    const json* f = field(name);
    if (!f)
        return {};
    std::vector<std::string> out;
    const std::string bad = std::string("'") + name + "' must be a string or an array of at most " +
                            std::to_string(maxCount) + " non-empty strings";
    if (f->is_string()) {
        out.push_back(f->get<std::string>());
    } else if (f->is_array() && f->size() <= maxCount) {
        for (const auto& s : *f) {
            if (!s.is_string())
                throw RequestError(400, bad);
            out.push_back(s.get<std::string>());
        }
    } else {
        throw RequestError(400, bad);
    }
    for (const auto& s : out)
        if (s.empty())
            throw RequestError(400, bad);
    return out;
}

} // namespace baton::server
