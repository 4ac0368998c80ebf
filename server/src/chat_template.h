// How a chat becomes a prompt for a base model, which has no chat format of its own:
// the turns as the script of a play, each speaker's label before their words, then the
// assistant's label for the model to write its next line, which ends where the model
// starts another speaker's line. With the default labels:
//
//   System: You are the narrator of a sea story.
//   User: Who is the captain?
//   Assistant:
//
// A message's "name" is its speaker's label (a character in a role-play); else its
// role's label. A model may bring its own labels in chat_template.json beside its
// weights, all fields optional:
//
//   {"start": "", "separator": "\n",
//    "labels": {"system": "Narrator", "user": "Reader", "assistant": "Baton"}}
//
// Torch- and HTTP-free, so it is tested on its own.
#pragma once

#include "requests.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace baton::server {

struct ChatTemplate {
    std::string start;            // before the first turn
    std::string separator = "\n"; // after each turn
    std::map<std::string, std::string> labels = {
        {"system", "System"}, {"user", "User"}, {"assistant", "Assistant"}};
};

// The template in a chat_template.json's text; a RequestError (500, naming the file
// and the field) when it is not one.
ChatTemplate parseChatTemplate(std::string_view text);
// The model's template: its folder's chat_template.json, else the default.
ChatTemplate loadChatTemplate(const std::string& modelDir);

struct ChatPrompt {
    std::string prompt;
    // The other speakers' labels at the start of a line: where the reply ends.
    std::vector<std::string> stops;
};
ChatPrompt renderChat(const ChatTemplate& chat, const std::vector<ChatMessage>& messages);

} // namespace baton::server
