#include "util/json.h"

#include "util/files.h"
#include "util/utf8.h"

namespace baton::engine {

Result<json::Json> parseJson(std::string_view text, const std::string& path) {
    if (const size_t bad = utf8::firstInvalid(text); bad != std::string_view::npos)
        return makeError(ErrorCode::InvalidUtf8,
                         path + " is not valid UTF-8 (byte " + std::to_string(bad) + ")");
    std::string why;
    auto j = json::parse(text, &why);
    if (!j)
        return makeError(ErrorCode::InvalidJson, path + " is not valid JSON: " + why);
    return std::move(*j);
}

Result<json::Json> readJsonFile(const std::string& path, size_t maxBytes) {
    auto text = files::readAll(path, maxBytes);
    if (!text)
        return text.error();
    return parseJson(*text, path);
}

} // namespace baton::engine
