#include "baton/engine/books.h"

#include "baton/engine/text.h"
#include "books/xhtml_text.h"
#include "books/xml_names.h"
#include "books/zip_archive.h"
#include "util/files.h"
#include "util/utf8.h"

#include <pugixml.hpp>

#include <cctype>
#include <functional>
#include <map>
#include <vector>

namespace baton::engine {

namespace {

using books::localName;

// The first descendant element with this local name (lower case; prefixes vary).
pugi::xml_node find(const pugi::xml_node& root, const char* name) {
    return root.find_node([&](const pugi::xml_node& n) {
        return n.type() == pugi::node_element && localName(n.name()) == name;
    });
}

Result<pugi::xml_document*> parseXml(pugi::xml_document& doc, const std::string& bytes,
                                     const std::string& name) {
    const auto r =
        doc.load_buffer(bytes.data(), bytes.size(), pugi::parse_default, pugi::encoding_utf8);
    if (!r)
        return makeError(ErrorCode::BookInvalid, "the EPUB's " + name +
                                                     " is not well-formed XML (" + r.description() +
                                                     ")");
    return &doc;
}

// An href of the package document as a path in the archive: relative to the package
// document's folder, percent-escapes decoded, the fragment dropped, "." and ".." folded.
std::string resolveHref(const std::string& base, std::string href) {
    if (const size_t hash = href.find('#'); hash != std::string::npos)
        href.erase(hash);
    std::string decoded;
    for (size_t i = 0; i < href.size(); ++i) {
        if (href[i] == '%' && i + 2 < href.size() && std::isxdigit(uint8_t(href[i + 1])) &&
            std::isxdigit(uint8_t(href[i + 2]))) {
            decoded += char(std::stoi(href.substr(i + 1, 2), nullptr, 16));
            i += 2;
        } else {
            decoded += href[i];
        }
    }
    std::vector<std::string> parts;
    std::string path = decoded.rfind('/', 0) == 0 ? decoded.substr(1) : base + decoded;
    size_t at = 0;
    while (at <= path.size()) {
        const size_t slash = std::min(path.find('/', at), path.size());
        const std::string part = path.substr(at, slash - at);
        if (part == "..") {
            if (!parts.empty())
                parts.pop_back();
        } else if (!part.empty() && part != ".") {
            parts.push_back(part);
        }
        at = slash + 1;
    }
    std::string out;
    for (const auto& p : parts)
        out += (out.empty() ? "" : "/") + p;
    return out;
}

// Every descendant element with this local name, in document order.
void forEach(const pugi::xml_node& root, const char* name,
             const std::function<void(const pugi::xml_node&)>& fn) {
    for (pugi::xml_node n = root.first_child(); n; n = n.next_sibling()) {
        if (n.type() != pugi::node_element)
            continue;
        if (localName(n.name()) == name)
            fn(n);
        forEach(n, name, fn);
    }
}

// Refuses content that is encrypted: Adobe's rights file, or encryption.xml naming
// anything but the font obfuscation that EPUB allows.
Result<void> checkDrm(books::ZipArchive& zip) {
    const std::string refuse = "this EPUB is DRM-protected (%s): Baton cannot read it; use a "
                               "DRM-free copy";
    auto drm = [&](const std::string& where) {
        std::string m = refuse;
        m.replace(m.find("%s"), 2, where);
        return makeError(ErrorCode::BookDrm, m);
    };
    if (zip.has("META-INF/rights.xml"))
        return drm("META-INF/rights.xml");
    if (!zip.has("META-INF/encryption.xml"))
        return {};
    auto bytes = zip.read("META-INF/encryption.xml");
    if (!bytes)
        return bytes.error();
    pugi::xml_document doc;
    if (auto r = parseXml(doc, *bytes, "META-INF/encryption.xml"); !r)
        return r.error();
    bool encrypted = false;
    forEach(doc, "encryptionmethod", [&](const pugi::xml_node& n) {
        const std::string algorithm = n.attribute("Algorithm").value();
        if (algorithm != "http://www.idpf.org/2008/embedding" &&
            algorithm != "http://ns.adobe.com/pdf/enc#RC")
            encrypted = true;
    });
    if (encrypted)
        return drm("META-INF/encryption.xml encrypts its text");
    return {};
}

std::string baseName(const std::string& path) {
    std::string name = path.substr(path.find_last_of('/') + 1);
    if (const size_t dot = name.find_last_of('.'); dot != std::string::npos && dot > 0)
        name.erase(dot);
    return name;
}

} // namespace

bool isEpubFile(std::string_view path) {
    return files::endsWithNoCase(path, ".epub");
}

bool isBookFile(std::string_view path) {
    for (const char* ext : {".txt", ".md", ".markdown", ".epub"})
        if (files::endsWithNoCase(path, ext))
            return true;
    return false;
}

Result<Book> readEpub(const std::string& path) {
    if (!files::exists(path))
        return makeError(ErrorCode::FileNotFound, "book not found: " + path);
    auto opened = books::ZipArchive::open(path);
    if (!opened)
        return opened.error();
    books::ZipArchive& zip = **opened;
    if (zip.has("mimetype")) {
        auto mime = zip.read("mimetype");
        if (!mime)
            return mime.error();
        if (mime->find("application/epub+zip") == std::string::npos)
            return makeError(ErrorCode::BookInvalid,
                             path + " is a zip file but not an EPUB (its mimetype is '" +
                                 mime->substr(0, 60) + "')");
    }
    if (auto drm = checkDrm(zip); !drm)
        return drm.error();

    // container.xml names the package document; it lists the files and their order.
    auto containerBytes = zip.read("META-INF/container.xml");
    if (!containerBytes)
        return makeError(ErrorCode::BookInvalid,
                         path + " is not an EPUB: it has no META-INF/container.xml");
    pugi::xml_document container;
    if (auto r = parseXml(container, *containerBytes, "META-INF/container.xml"); !r)
        return r.error();
    const std::string opfPath = find(container, "rootfile").attribute("full-path").value();
    if (opfPath.empty())
        return makeError(ErrorCode::BookInvalid,
                         "the EPUB's container.xml names no package document");
    auto opfBytes = zip.read(opfPath);
    if (!opfBytes)
        return opfBytes.error();
    pugi::xml_document opf;
    if (auto r = parseXml(opf, *opfBytes, opfPath); !r)
        return r.error();
    const std::string base =
        opfPath.find('/') == std::string::npos ? "" : opfPath.substr(0, opfPath.rfind('/') + 1);

    struct Item {
        std::string href, mediaType, properties;
    };
    std::map<std::string, Item> manifest;
    forEach(opf, "item", [&](const pugi::xml_node& n) {
        manifest[n.attribute("id").value()] = {n.attribute("href").value(),
                                               n.attribute("media-type").value(),
                                               n.attribute("properties").value()};
    });
    const pugi::xml_node spine = find(opf, "spine");
    if (!spine)
        return makeError(ErrorCode::BookInvalid, "the EPUB's " + opfPath + " has no spine");

    Book book;
    book.title = find(opf, "title").text().get();
    std::string text;
    std::string failure;
    forEach(spine, "itemref", [&](const pugi::xml_node& ref) {
        if (!failure.empty() || std::string(ref.attribute("linear").value()) == "no")
            return;
        const auto item = manifest.find(ref.attribute("idref").value());
        if (item == manifest.end()) {
            failure = std::string("the EPUB's spine names an item that is not in its manifest (") +
                      ref.attribute("idref").value() + ")";
            return;
        }
        const Item& it = item->second;
        if (it.properties.find("nav") != std::string::npos ||
            (it.mediaType != "application/xhtml+xml" && it.mediaType != "text/html"))
            return; // the table of contents, or not a text document
        const std::string name = resolveHref(base, it.href);
        auto bytes = zip.read(name);
        if (!bytes) {
            failure = bytes.error().message;
            return;
        }
        auto paragraphs = books::xhtmlParagraphs(*bytes, name);
        if (!paragraphs) {
            failure = paragraphs.error().message;
            return;
        }
        if (paragraphs->empty())
            return;
        for (const auto& p : *paragraphs)
            text += (text.empty() ? "" : "\n\n") + p;
        book.chapters += 1;
    });
    if (!failure.empty())
        return makeError(ErrorCode::BookInvalid, failure);
    if (const size_t bad = utf8::firstInvalid(text); bad != std::string::npos)
        return makeError(ErrorCode::BookInvalid, "the EPUB's text is not valid UTF-8");
    if (text.empty())
        return makeError(ErrorCode::BookInvalid, path + " holds no text in its reading order");
    book.text = text + "\n";
    if (book.title.empty())
        book.title = baseName(path);
    return book;
}

Result<Book> readBook(const std::string& path, bool unwrap) {
    if (isEpubFile(path))
        return readEpub(path);
    if (!files::exists(path))
        return makeError(ErrorCode::FileNotFound, "book not found: " + path);
    auto bytes = files::readAll(path, size_t(1) << 31);
    if (!bytes)
        return bytes.error();
    if (const size_t bad = utf8::firstInvalid(*bytes); bad != std::string::npos)
        return makeError(ErrorCode::InvalidUtf8,
                         path + " is not valid UTF-8 (first bad byte at offset " +
                             std::to_string(bad) + "); convert it to UTF-8 first");
    Book book;
    book.title = baseName(path);
    book.text = unwrap ? unwrapText(*bytes) : std::move(*bytes);
    book.chapters = 1;
    return book;
}

} // namespace baton::engine
