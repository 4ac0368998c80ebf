#include "request_fields.h"

#include <baton/engine/text.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace baton::server {

json::Json parseJsonObject(std::string_view body) {
    if (const size_t bad = engine::firstInvalidUtf8(body); bad != std::string::npos)
        throw RequestError(400, "the request body is not valid UTF-8 (byte " + std::to_string(bad) +
                                    ")");
    std::string why;
    std::optional<json::Json> object = json::parse(body, &why);
    if (!object)
        throw RequestError(400, "the request body is not valid JSON: " + why);
    if (!object->is_object())
        throw RequestError(400, "the request body must be a JSON object");
    return std::move(*object);
}

const json::Json* Fields::field(const char* name) const {
    auto it = m_object.find(name);
    return it == m_object.end() || it->is_null() ? nullptr : &*it;
}

bool Fields::has(const char* name) const {
    return field(name) != nullptr;
}

template <typename T, typename Read>
std::optional<T> Fields::read(const char* name, Read&& read) const {
    if (!has(name))
        return std::nullopt;
    json::FieldReader reader(m_object);
    T out{};
    if (!read(reader, out))
        throw RequestError(400, reader.error());
    return out;
}

std::optional<std::string> Fields::string(const char* name) const {
    return read<std::string>(
        name, [&](json::FieldReader& r, std::string& out) { return r.string(name, out); });
}

std::optional<bool> Fields::boolean(const char* name) const {
    return read<bool>(name, [&](json::FieldReader& r, bool& out) { return r.boolean(name, out); });
}

std::optional<double> Fields::number(const char* name, double lo, double hi) const {
    return read<double>(
        name, [&](json::FieldReader& r, double& out) { return r.number(name, lo, hi, out); });
}

std::optional<int64_t> Fields::integer(const char* name, int64_t lo, int64_t hi) const {
    const json::Json* f = field(name);
    if (f && f->is_number_float()) { // 200.0 from JavaScript clients
        const double v = f->get<double>();
        if (!std::isfinite(v) || std::floor(v) != v || std::fabs(v) >= 9e15)
            throw RequestError(400, std::string("\"") + name + "\" must be an integer, not " +
                                        f->dump());
        return int64_t(*number(name, double(lo), double(hi)));
    }
    return read<int64_t>(
        name, [&](json::FieldReader& r, int64_t& out) { return r.integer(name, lo, hi, out); });
}

std::optional<int64_t> Fields::whole(const char* name, int64_t lo, int64_t hi) const {
    const json::Json* f = field(name);
    if (f && f->is_number_float()) {
        const double v = f->get<double>();
        if (!std::isfinite(v) || v < double(lo) || v >= double(hi) + 1)
            throw RequestError(400, std::string("\"") + name + "\" must be in [" +
                                        std::to_string(lo) + ", " + std::to_string(hi) + "]");
        return std::clamp(static_cast<int64_t>(std::trunc(v)), lo, hi);
    }
    return integer(name, lo, hi);
}

std::optional<uint64_t> Fields::seed(const char* name) const {
    const json::Json* f = field(name);
    if (!f)
        return std::nullopt;
    if (f->is_number_unsigned())
        return f->get<uint64_t>();
    if (f->is_number_integer())
        return f->get<int64_t>() < 0 ? std::nullopt : std::optional<uint64_t>(f->get<int64_t>());
    if (!f->is_number_float() || !std::isfinite(f->get<double>()))
        throw RequestError(400, std::string("\"") + name + "\" must be a number");
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
    const json::Json* f = field(name);
    if (!f)
        return {};
    std::vector<std::string> out;
    const std::string bad = std::string("\"") + name +
                            "\" must be a string or an array of at most " +
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
