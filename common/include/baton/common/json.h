// The one way Baton reads JSON: parse without exceptions into a value or a message
// a user can act on, then read an object's fields with their types and ranges
// checked, naming the field that is wrong. Every reader of a JSON file in Baton
// (model configs, baton.json, training runs, topic models, story settings) goes
// through here; writers use nlohmann::json directly.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace baton::json {

using Json = nlohmann::json;

// Parses text as one JSON value. On failure returns nothing and sets *error to why,
// without nlohmann's exception prefix ("syntax error while parsing value - invalid
// literal; last read: 'x'", "invalid string: ill-formed UTF-8 byte", ...).
inline std::optional<Json> parse(std::string_view text, std::string* error) {
    try {
        return Json::parse(text.begin(), text.end());
    } catch (const nlohmann::json::exception& e) {
        if (error) {
            std::string what = e.what();
            if (const size_t close = what.find("] ");
                what.rfind("[json.exception", 0) == 0 && close != std::string::npos)
                what.erase(0, close + 2);
            *error = what;
        }
        return std::nullopt;
    }
}

// The string at key, or "" when the value is not an object, the key is missing or its
// value is not a string. Never throws: for format tags, where any other value simply
// means "not this format" (Json::value throws for a key of another type).
inline std::string stringOrEmpty(const Json& object, const char* key) {
    if (!object.is_object())
        return {};
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Reads the fields of one JSON object. Each call reads key into out when it is present
// (or fails when it is missing and required) and returns whether it did; the first
// failure is kept in error() and every later call does nothing and returns false.
class FieldReader {
public:
    enum Need { Optional, Required };

    explicit FieldReader(const Json& object)
        : m_o(object) {
        if (!m_o.is_object())
            m_error = "not a JSON object";
    }

    template <typename Int>
    bool integer(const char* key, int64_t lo, int64_t hi, Int& out, Need need = Optional) {
        const Json* v = find(key, need);
        if (!v)
            return false;
        const bool ok = v->is_number_integer() &&
                        !(v->is_number_unsigned() &&
                          v->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())) &&
                        v->get<int64_t>() >= lo && v->get<int64_t>() <= hi;
        if (!ok)
            return fail(key, v,
                        "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
        out = static_cast<Int>(v->get<int64_t>());
        return true;
    }

    bool number(const char* key, double lo, double hi, double& out, Need need = Optional) {
        const Json* v = find(key, need);
        if (!v)
            return false;
        if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < lo ||
            v->get<double>() > hi)
            return fail(key, v, "a number in [" + show(lo) + ", " + show(hi) + "]");
        out = v->get<double>();
        return true;
    }

    bool boolean(const char* key, bool& out, Need need = Optional) {
        const Json* v = find(key, need);
        if (!v)
            return false;
        if (!v->is_boolean())
            return fail(key, v, "true or false");
        out = v->get<bool>();
        return true;
    }

    bool string(const char* key, std::string& out, Need need = Optional) {
        const Json* v = find(key, need);
        if (!v)
            return false;
        if (!v->is_string())
            return fail(key, v, "a string");
        out = v->get<std::string>();
        return true;
    }

    // An array of strings; nonEmpty refuses "" among them.
    bool strings(const char* key, std::vector<std::string>& out, bool nonEmpty,
                 Need need = Optional) {
        const Json* v = find(key, need);
        if (!v)
            return false;
        const char* what = nonEmpty ? "an array of non-empty strings" : "an array of strings";
        if (!v->is_array())
            return fail(key, v, what);
        std::vector<std::string> items;
        for (const auto& e : *v) {
            if (!e.is_string() || (nonEmpty && e.get_ref<const std::string&>().empty()))
                return fail(key, v, what);
            items.push_back(e.get<std::string>());
        }
        out = std::move(items);
        return true;
    }

    // An array of integers, each in [lo, hi].
    bool integers(const char* key, int64_t lo, int64_t hi, std::vector<int>& out,
                  Need need = Optional) {
        const Json* v = find(key, need);
        if (!v)
            return false;
        const std::string what =
            "an array of integers in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
        if (!v->is_array())
            return fail(key, v, what);
        std::vector<int> items;
        for (const auto& e : *v) {
            if (!e.is_number_integer() ||
                (e.is_number_unsigned() &&
                 e.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())) ||
                e.get<int64_t>() < lo || e.get<int64_t>() > hi)
                return fail(key, v, what);
            items.push_back(static_cast<int>(e.get<int64_t>()));
        }
        out = std::move(items);
        return true;
    }

    bool ok() const { return m_error.empty(); }
    const std::string& error() const { return m_error; }

private:
    const Json* find(const char* key, Need need) {
        if (!m_error.empty())
            return nullptr;
        const auto it = m_o.find(key);
        if (it == m_o.end() || it->is_null()) {
            if (need == Required)
                m_error = std::string("\"") + key + "\" is missing";
            return nullptr;
        }
        return &*it;
    }
    bool fail(const char* key, const Json* v, const std::string& what) {
        std::string shown = v->dump();
        if (shown.size() > 40)
            shown = shown.substr(0, 37) + "...";
        m_error = std::string("\"") + key + "\" must be " + what + ", not " + shown;
        return false;
    }
    static std::string show(double v) {
        if (v == std::numeric_limits<double>::max())
            return "max";
        std::string s = std::to_string(v);
        while (s.size() > 1 && s.back() == '0')
            s.pop_back();
        if (!s.empty() && s.back() == '.')
            s.pop_back();
        return s;
    }

    const Json& m_o;
    std::string m_error;
};

} // namespace baton::json
