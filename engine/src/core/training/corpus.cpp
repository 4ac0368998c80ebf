#include "training/corpus.h"

#include "baton/engine/books.h"
#include "baton/engine/text.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/utf8.h"

#include <algorithm>
#include <cstring>
#include <dirent.h>
#include <sys/stat.h>

namespace baton::engine {

namespace {

void listFiles(const std::string& folder, std::vector<std::string>& out) {
    DIR* dir = ::opendir(folder.c_str());
    if (!dir)
        return;
    std::vector<std::string> names;
    while (dirent* e = ::readdir(dir)) {
        const std::string n = e->d_name;
        if (n != "." && n != ".." && n[0] != '.')
            names.push_back(n);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    for (const auto& n : names) {
        const std::string path = files::join(folder, n);
        if (files::isDirectory(path))
            listFiles(path, out);
        else if (isBookFile(n))
            out.push_back(path);
    }
}

// The offset of the start of the line that contains `pos`.
size_t lineStart(std::string_view text, size_t pos) {
    const size_t nl = text.rfind('\n', pos);
    return nl == std::string_view::npos ? 0 : nl + 1;
}

size_t findCaseInsensitive(std::string_view text, std::string_view needle, size_t from = 0) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c + 32) : c; };
    for (size_t i = from; i + needle.size() <= text.size(); ++i) {
        size_t j = 0;
        while (j < needle.size() && lower(text[i + j]) == lower(needle[j]))
            ++j;
        if (j == needle.size())
            return i;
    }
    return std::string_view::npos;
}

constexpr int64_t kCacheVersion = 1;

} // namespace

std::string stripGutenberg(std::string_view text) {
    size_t begin = 0, end = text.size();
    for (const char* marker :
         {"*** start of the project gutenberg", "*** start of this project gutenberg",
          "***start of the project gutenberg"}) {
        const size_t at = findCaseInsensitive(text, marker);
        if (at != std::string_view::npos) {
            const size_t nl = text.find('\n', at);
            begin = nl == std::string_view::npos ? text.size() : nl + 1;
            break;
        }
    }
    for (const char* marker :
         {"*** end of the project gutenberg", "*** end of this project gutenberg",
          "***end of the project gutenberg", "end of the project gutenberg ebook",
          "end of project gutenberg's"}) {
        const size_t at = findCaseInsensitive(text, marker, begin);
        if (at != std::string_view::npos && at < end)
            end = lineStart(text, at);
    }
    // Trim the blank lines left at either end.
    while (begin < end && (text[begin] == '\n' || text[begin] == '\r'))
        ++begin;
    while (end > begin && (text[end - 1] == '\n' || text[end - 1] == '\r' || text[end - 1] == ' '))
        --end;
    return std::string(text.substr(begin, end - begin)) + (end > begin ? "\n" : "");
}

Result<std::vector<Document>> loadCorpus(const std::vector<std::string>& paths, bool unwrap) {
    std::vector<std::string> found;
    for (const auto& p : paths) {
        if (files::isDirectory(p)) {
            const size_t before = found.size();
            listFiles(p, found);
            if (found.size() == before)
                return makeError(ErrorCode::FileNotFound,
                                 "no .txt, .md or .epub files in the folder " + p);
        } else if (files::exists(p)) {
            found.push_back(p);
        } else {
            return makeError(ErrorCode::FileNotFound, "corpus file not found: " + p);
        }
    }
    std::vector<Document> docs;
    for (const auto& path : found) {
        auto book = readBook(path, false); // EPUB chapters, or UTF-8 text
        if (!book)
            return book.error();
        std::string clean = stripGutenberg(book->text);
        if (unwrap)
            clean = unwrapText(clean);
        if (clean.find_first_not_of(" \t\r\n") == std::string::npos)
            return makeError(ErrorCode::InvalidArgument, path + " holds no text");
        docs.push_back({path, std::move(clean)});
    }
    if (docs.empty())
        return makeError(ErrorCode::InvalidArgument, "the corpus is empty");
    return docs;
}

int64_t TokenizedCorpus::tokenCount() const {
    int64_t n = 0;
    for (const auto& d : docs)
        n += static_cast<int64_t>(d.size());
    return n;
}

Result<TokenizedCorpus> tokenizeCached(const std::vector<Document>& docs,
                                       const Tokenizer& tokenizer, const std::string& cacheDir) {
    ContentHash key;
    key.update(tokenizer.identity());
    for (const auto& d : docs) {
        key.update(d.name);
        key.update("\n");
        key.update(hashHex(d.text));
    }
    const std::string path = files::join(cacheDir, "tokens-" + key.hex() + ".bin");
    TokenizedCorpus out;
    if (auto cached = files::readAll(path); cached && cached->size() >= 24) {
        // version, document count, then per document: name length, name, id count, ids;
        // a trailing content hash.
        const std::string& b = *cached;
        ContentHash check;
        check.update(b.data(), b.size() - 8);
        uint64_t stored;
        std::memcpy(&stored, b.data() + b.size() - 8, 8);
        size_t pos = 0;
        auto get = [&](void* dst, size_t n) {
            if (pos + n > b.size() - 8)
                return false;
            std::memcpy(dst, b.data() + pos, n);
            pos += n;
            return true;
        };
        int64_t version = 0, count = 0;
        bool ok = stored == check.digest() && get(&version, 8) && version == kCacheVersion &&
                  get(&count, 8) && count == int64_t(docs.size());
        for (int64_t i = 0; ok && i < count; ++i) {
            int64_t nameLen = 0, ids = 0;
            ok = get(&nameLen, 8) && nameLen >= 0 && nameLen < (1 << 20);
            std::string name(ok ? size_t(nameLen) : 0, '\0');
            ok = ok && get(name.data(), name.size()) && get(&ids, 8) && ids >= 0 &&
                 size_t(ids) * 4 <= b.size();
            std::vector<int32_t> v(ok ? size_t(ids) : 0);
            ok = ok && get(v.data(), v.size() * 4);
            if (ok) {
                out.names.push_back(std::move(name));
                out.docs.push_back(std::move(v));
            }
        }
        if (ok)
            return out;
        out = {};
    }
    std::string blob;
    auto put = [&](const void* p, size_t n) { blob.append(static_cast<const char*>(p), n); };
    const int64_t version = kCacheVersion, count = static_cast<int64_t>(docs.size());
    put(&version, 8);
    put(&count, 8);
    for (const auto& d : docs) {
        auto ids = tokenizer.encode(d.text);
        const int64_t nameLen = static_cast<int64_t>(d.name.size()),
                      n = static_cast<int64_t>(ids.size());
        put(&nameLen, 8);
        put(d.name.data(), d.name.size());
        put(&n, 8);
        put(ids.data(), ids.size() * 4);
        out.names.push_back(d.name);
        out.docs.push_back(std::move(ids));
    }
    ContentHash sum;
    sum.update(blob);
    const uint64_t digest = sum.digest();
    put(&digest, 8);
    ::mkdir(cacheDir.c_str(), 0755);
    if (auto r = files::writeAtomically(path, blob); !r)
        return r.error();
    return out;
}

std::vector<Sequence> planSequences(const TokenizedCorpus& corpus, const WindowSettings& windows,
                                    int bpttWindows, std::vector<std::vector<WindowSpan>>& spans) {
    std::vector<Sequence> sequences;
    spans.clear();
    for (size_t doc = 0; doc < corpus.docs.size(); ++doc) {
        const int64_t n = static_cast<int64_t>(corpus.docs[doc].size());
        auto plan = planWindows(n, windows);
        int64_t full = 0;
        while (full < int64_t(plan.size()) && plan[size_t(full)].length == windows.window &&
               plan[size_t(full)].lastScored == plan[size_t(full)].start + windows.window)
            ++full;
        for (int64_t first = 0; first + bpttWindows <= full; first += bpttWindows)
            sequences.push_back({static_cast<int>(doc), first});
        spans.push_back(std::move(plan));
    }
    return sequences;
}

} // namespace baton::engine
