// A small EPUB for tst_books, as zip entries (kept out of the test's source, whose
// raw strings moc does not parse).
#pragma once

#include <zip.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace baton::test::epub {

using Entries = std::vector<std::pair<std::string, std::string>>;

inline bool writeZip(const std::string& path, const Entries& entries) {
    int error = 0;
    zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
    if (!z)
        return false;
    for (const auto& [name, content] : entries) {
        zip_source_t* src = zip_source_buffer(z, content.data(), content.size(), 0);
        if (!src || zip_file_add(z, name.c_str(), src, ZIP_FL_ENC_UTF_8) < 0) {
            zip_discard(z);
            return false;
        }
    }
    return zip_close(z) == 0;
}

inline const char* kContainer = R"(<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>)";

inline std::string opf(const std::string& spine) {
    return R"(<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:title>The Voyage of the Tern</dc:title>
  </metadata>
  <manifest>
    <item id="ch2" href="text/chapter%202.xhtml" media-type="application/xhtml+xml"/>
    <item id="ch1" href="text/ch1.xhtml" media-type="application/xhtml+xml"/>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="notes" href="notes.xhtml" media-type="application/xhtml+xml"/>
    <item id="cover" href="images/cover.jpg" media-type="image/jpeg"/>
  </manifest>
  <spine>)" +
           spine + R"(</spine>
</package>)";
}

inline const char* kSpine = R"(<itemref idref="nav"/><itemref idref="ch1"/><itemref idref="ch2"/>
    <itemref idref="notes" linear="no"/>)";

inline const char* kChapter1 = R"(<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>One</title>
<style>p { color: red }</style><script>alert("no")</script></head>
<body>
  <h1>Chapter   One</h1>
  <p>The ship was   called <i>Tern</i>,
     and her&nbsp;captain &amp; crew were <b>quiet</b>.</p>
  <p><img src="../images/cover.jpg" alt="a ship"/>&#8220;Hoist the sail,&#8221; she said.<br/>Nobody moved.</p>
  <script type="text/javascript">var x = "hidden";</script>
</body></html>)";

inline const char* kChapter2 = R"(<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Two</title></head>
<body><div><h2>Chapter Two</h2><div><p>Land — at last.</p></div></div>
<svg xmlns="http://www.w3.org/2000/svg"><text>drawing</text></svg></body></html>)";

inline const char* kNav = R"(<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body>
<nav><ol><li>Chapter One</li></ol></nav></body></html>)";

inline Entries goodBook(const std::string& spine = kSpine) {
    return {{"mimetype", "application/epub+zip"},
            {"META-INF/container.xml", kContainer},
            {"OEBPS/content.opf", opf(spine)},
            {"OEBPS/nav.xhtml", kNav},
            {"OEBPS/text/ch1.xhtml", kChapter1},
            {"OEBPS/text/chapter 2.xhtml", kChapter2},
            {"OEBPS/notes.xhtml", "<html><body><p>Endnote</p></body></html>"},
            {"OEBPS/images/cover.jpg", std::string("\xff\xd8\xff\xe0", 4)}};
}

inline Entries with(Entries e, const std::string& name, const std::string& content) {
    for (auto& [n, c] : e)
        if (n == name) {
            c = content;
            return e;
        }
    e.emplace_back(name, content);
    return e;
}

inline Entries without(Entries e, const std::string& name) {
    e.erase(std::remove_if(e.begin(), e.end(), [&](const auto& p) { return p.first == name; }),
            e.end());
    return e;
}

inline const char* kFontObfuscation =
    R"(<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container"
            xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>
            <enc:EncryptionMethod Algorithm="http://www.idpf.org/2008/embedding"/>
            <enc:CipherData><enc:CipherReference URI="OEBPS/fonts/a.otf"/></enc:CipherData>
            </enc:EncryptedData></encryption>)";
inline const char* kAesEncryption =
    R"(<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container"
            xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>
            <enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>
            <enc:CipherData><enc:CipherReference URI="OEBPS/text/ch1.xhtml"/></enc:CipherData>
            </enc:EncryptedData></encryption>)";

} // namespace baton::test::epub
