#include "books/xhtml_text.h"

#include "books/xml_names.h"
#include "util/utf8.h"

#include <pugixml.hpp>

#include <cstring>

namespace baton::engine::books {

namespace {

bool oneOf(const std::string& name, std::initializer_list<const char*> names) {
    for (const char* n : names)
        if (name == n)
            return true;
    return false;
}

// Named entities that XHTML files use without declaring them (pugixml keeps them as
// written): the common ones.
void replaceEntities(std::string& s) {
    static const std::pair<const char*, const char*> kEntities[] = {
        {"&nbsp;", "\u00a0"},   {"&mdash;", "\u2014"},  {"&ndash;", "\u2013"},
        {"&hellip;", "\u2026"}, {"&lsquo;", "\u2018"},  {"&rsquo;", "\u2019"},
        {"&ldquo;", "\u201c"},  {"&rdquo;", "\u201d"},  {"&copy;", "\u00a9"},
        {"&eacute;", "\u00e9"}, {"&egrave;", "\u00e8"}, {"&aelig;", "\u00e6"},
    };
    if (s.find('&') == std::string::npos)
        return;
    for (const auto& [from, to] : kEntities)
        for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at))
            s.replace(at, std::strlen(from), to), at += std::strlen(to);
}

class Collector {
public:
    void text(const char* s) {
        for (; *s; ++s) {
            const char c = *s;
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                m_space = !m_current.empty() && m_current.back() != '\n';
            } else {
                if (m_space)
                    m_current += ' ';
                m_space = false;
                m_current += c;
            }
        }
    }
    void lineBreak() {
        while (!m_current.empty() && m_current.back() == ' ')
            m_current.pop_back();
        if (!m_current.empty())
            m_current += '\n';
        m_space = false;
    }
    void endParagraph() {
        while (!m_current.empty() && (m_current.back() == ' ' || m_current.back() == '\n'))
            m_current.pop_back();
        if (!m_current.empty()) {
            replaceEntities(m_current);
            // A character reference to a surrogate (&#xD800;) is not a character: pugixml
            // writes its bytes as they are, and they are not UTF-8.
            m_paragraphs.push_back(utf8::sanitize(m_current));
        }
        m_current.clear();
        m_space = false;
    }
    std::vector<std::string> take() {
        endParagraph();
        return std::move(m_paragraphs);
    }

private:
    std::string m_current;
    bool m_space = false;
    std::vector<std::string> m_paragraphs;
};

void walk(const pugi::xml_node& node, Collector& out, int depth) {
    if (depth > 200) // a document nested this deep is not a book's chapter
        return;
    for (pugi::xml_node child = node.first_child(); child; child = child.next_sibling()) {
        if (child.type() == pugi::node_pcdata || child.type() == pugi::node_cdata) {
            out.text(child.value());
            continue;
        }
        if (child.type() != pugi::node_element)
            continue;
        const std::string name = localName(child.name());
        if (oneOf(name, {"script", "style", "head", "img", "svg", "math", "object", "video",
                         "audio", "iframe", "noscript", "template", "image"}))
            continue;
        if (name == "br") {
            out.lineBreak();
            continue;
        }
        const bool block = oneOf(
            name,
            {"p",          "div",        "h1",     "h2",      "h3",      "h4", "h5",     "h6",
             "li",         "blockquote", "pre",    "section", "article", "tr", "dd",     "dt",
             "figcaption", "hr",         "table",  "ul",      "ol",      "dl", "header", "footer",
             "aside",      "body",       "figure", "address", "caption", "td", "th"});
        if (block)
            out.endParagraph();
        walk(child, out, depth + 1);
        if (block)
            out.endParagraph();
    }
}

} // namespace

Result<std::vector<std::string>> xhtmlParagraphs(const std::string& bytes,
                                                 const std::string& name) {
    if (const size_t bad = utf8::firstInvalid(bytes); bad != std::string::npos)
        return makeError(ErrorCode::BookInvalid, "the EPUB's " + name +
                                                     " is not valid UTF-8 (first bad byte at " +
                                                     std::to_string(bad) + ")");
    pugi::xml_document doc;
    const auto parsed =
        doc.load_buffer(bytes.data(), bytes.size(), pugi::parse_default | pugi::parse_ws_pcdata,
                        pugi::encoding_utf8);
    if (!parsed)
        return makeError(ErrorCode::BookInvalid, "the EPUB's " + name +
                                                     " is not well-formed XHTML (" +
                                                     parsed.description() + " at byte " +
                                                     std::to_string(parsed.offset) + ")");
    Collector out;
    walk(doc, out, 0);
    return out.take();
}

} // namespace baton::engine::books
