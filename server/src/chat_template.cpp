#include "chat_template.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace baton::server {

namespace {

constexpr size_t kMaxField = 256;

RequestError invalid(const std::string& why) {
    return RequestError(500, "the model's chat_template.json is invalid: " + why);
}

std::string textField(const json::Json& object, const char* name, const std::string& fallback) {
    const auto it = object.find(name);
    if (it == object.end() || it->is_null())
        return fallback;
    if (!it->is_string() || it->get<std::string>().size() > kMaxField)
        throw invalid(std::string("\"") + name + "\" must be a string of at most 256 bytes");
    return it->get<std::string>();
}

std::string labelOf(const ChatTemplate& chat, const ChatMessage& m) {
    if (!m.name.empty())
        return m.name;
    if (const auto it = chat.labels.find(m.role); it != chat.labels.end())
        return it->second;
    std::string label = m.role; // another role (tool, developer): its name, capitalised
    label[0] = char(std::toupper(static_cast<unsigned char>(label[0])));
    return label;
}

} // namespace

ChatTemplate parseChatTemplate(std::string_view text) {
    json::Json object;
    try {
        object = parseJsonObject(text);
    } catch (const RequestError& e) {
        throw invalid(e.what());
    }
    ChatTemplate chat;
    chat.start = textField(object, "start", chat.start);
    chat.separator = textField(object, "separator", chat.separator);
    if (chat.separator.empty())
        throw invalid("\"separator\" must not be empty (it ends each turn)");
    if (const auto labels = object.find("labels"); labels != object.end() && !labels->is_null()) {
        if (!labels->is_object())
            throw invalid("\"labels\" must be an object of role: label");
        for (const auto& [role, label] : labels->items()) {
            const std::string value = textField(*labels, role.c_str(), "");
            if (value.empty())
                throw invalid("the label of \"" + role + "\" must not be empty");
            chat.labels[role] = value;
        }
    }
    return chat;
}

ChatTemplate loadChatTemplate(const std::string& modelDir) {
    const std::filesystem::path path = std::filesystem::path(modelDir) / "chat_template.json";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        return {};
    if (std::filesystem::file_size(path, ec) > 64 * 1024)
        throw invalid("it is larger than 64 KB");
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in)
        throw invalid("it cannot be read");
    return parseChatTemplate(text.str());
}

ChatPrompt renderChat(const ChatTemplate& chat, const std::vector<ChatMessage>& messages) {
    ChatPrompt out;
    out.prompt = chat.start;
    const std::string assistant = chat.labels.at("assistant");
    auto stopAt = [&](const std::string& label) { // the first 32 speakers
        const std::string stop = chat.separator + label + ":";
        if (label != assistant && out.stops.size() < 32 &&
            std::find(out.stops.begin(), out.stops.end(), stop) == out.stops.end())
            out.stops.push_back(stop);
    };
    stopAt(chat.labels.at("user"));
    for (const ChatMessage& m : messages) {
        const std::string label = labelOf(chat, m);
        out.prompt += label + ": " + m.content + chat.separator;
        stopAt(label);
    }
    out.prompt += assistant + ":";
    return out;
}

} // namespace baton::server
