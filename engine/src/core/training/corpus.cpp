#include "training/corpus.h"

#include "baton/engine/books.h"
#include "baton/engine/text.h"
#include "training/held_out.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/utf8.h"

#include <algorithm>
#include <cstring>
#include <dirent.h>
#include <sys/stat.h>

namespace baton::engine {

namespace {

void listSources(const std::string& folder, std::vector<std::string>& out) {
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
            listSources(path, out);
        else if (isBookFile(n) || isLibraryShard(n))
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

Result<std::vector<TokenSource>> listTokenSources(const std::vector<std::string>& paths) {
    std::vector<std::string> found;
    for (const auto& p : paths) {
        if (files::isDirectory(p)) {
            const size_t before = found.size();
            listSources(p, found);
            if (found.size() == before)
                return makeError(ErrorCode::FileNotFound,
                                 "no .txt, .md, .epub or library (.tar.xz) files in the folder " +
                                     p);
        } else if (files::exists(p)) {
            found.push_back(p);
        } else {
            return makeError(ErrorCode::FileNotFound, "corpus file not found: " + p);
        }
    }
    std::vector<TokenSource> sources;
    for (auto& path : found) {
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0)
            return makeError(ErrorCode::FileUnreadable, "cannot read " + path);
        TokenSource s;
        s.bytes = uint64_t(st.st_size);
        s.shard = isLibraryShard(path);
        s.path = std::move(path);
        sources.push_back(std::move(s));
    }
    return sources;
}

Result<void> readSourceDocuments(const TokenSource& source, bool unwrap,
                                 const std::function<bool(Document&&)>& onDocument,
                                 const CancelToken& cancel,
                                 const std::function<void(double)>& progress) {
    bool stopped = false;
    Result<void> problem;
    auto take = [&](std::string name, std::string_view text) {
        std::string clean = stripGutenberg(text);
        if (unwrap)
            clean = unwrapText(clean);
        if (clean.find_first_not_of(" \t\r\n") == std::string::npos) {
            problem = makeError(ErrorCode::InvalidArgument, name + " holds no text");
            return false;
        }
        stopped = !onDocument({std::move(name), std::move(clean)});
        return !stopped;
    };
    if (source.shard) {
        auto r = readLibraryShard(
            source.path, [&](Book&& work) { return take(std::move(work.title), work.text); },
            cancel, progress);
        if (!r)
            return r.error();
        return problem;
    }
    if (cancel.cancelled())
        return makeError(ErrorCode::Cancelled, "cancelled");
    auto book = readBook(source.path, false); // EPUB chapters, or UTF-8 text
    if (!book)
        return book.error();
    take(source.path, book->text);
    if (progress)
        progress(1.0);
    return problem;
}

Result<std::vector<Document>> loadCorpus(const std::vector<std::string>& paths, bool unwrap) {
    auto sources = listTokenSources(paths);
    if (!sources)
        return sources.error();
    std::vector<Document> docs;
    for (const auto& source : *sources) {
        auto r = readSourceDocuments(source, unwrap, [&](Document&& d) {
            docs.push_back(std::move(d));
            return true;
        });
        if (!r)
            return r.error();
    }
    if (docs.empty())
        return makeError(ErrorCode::InvalidArgument, "the corpus is empty");
    return docs;
}

Result<std::vector<Document>> sampleCorpus(const std::vector<std::string>& paths, bool unwrap,
                                           uint64_t maxBytes,
                                           const std::vector<std::string>& skipWorks) {
    auto sources = listTokenSources(paths);
    if (!sources)
        return sources.error();
    const auto skipped = [&](const Document& d) {
        return std::any_of(skipWorks.begin(), skipWorks.end(),
                           [&](const std::string& w) { return namesWork(d.name, w); });
    };
    uint64_t count = 0, bytes = 0;
    for (const auto& source : *sources) {
        auto r = readSourceDocuments(source, unwrap, [&](Document&& d) {
            if (skipped(d))
                return true;
            ++count;
            bytes += d.text.size();
            return true;
        });
        if (!r)
            return r.error();
    }
    const uint64_t stride = bytes <= maxBytes ? 1 : (bytes + maxBytes - 1) / maxBytes;
    std::vector<Document> docs;
    uint64_t index = 0, taken = 0;
    for (const auto& source : *sources) {
        auto r = readSourceDocuments(source, unwrap, [&](Document&& d) {
            if (skipped(d))
                return true;
            if (index++ % stride == 0 && taken + d.text.size() <= maxBytes) {
                taken += d.text.size();
                docs.push_back(std::move(d));
            }
            return true;
        });
        if (!r)
            return r.error();
    }
    if (docs.empty())
        return makeError(ErrorCode::InvalidArgument,
                         count == 0 ? std::string("the corpus is empty")
                                    : "no document of the corpus fits in a sample of " +
                                          std::to_string(maxBytes) + " bytes");
    return docs;
}

int64_t TokenizedCorpus::tokenCount() const {
    int64_t n = 0;
    for (const auto& d : docs)
        n += static_cast<int64_t>(d.size());
    return n;
}

TokenizedCorpus TokenizedCorpus::slice(size_t begin, size_t end) const {
    TokenizedCorpus out;
    end = std::min(end, docs.size());
    begin = std::min(begin, end);
    out.names.assign(names.begin() + long(begin), names.begin() + long(end));
    out.docs.assign(docs.begin() + long(begin), docs.begin() + long(end));
    out.storage = storage;
    return out;
}

TokenizedCorpus TokenizedCorpus::fromVectors(std::vector<std::string> names,
                                             std::vector<std::vector<int32_t>> docs) {
    auto held = std::make_shared<std::vector<std::vector<int32_t>>>(std::move(docs));
    TokenizedCorpus out;
    out.names = std::move(names);
    out.names.resize(held->size());
    for (const auto& d : *held)
        out.docs.push_back({d.data(), d.size()});
    out.storage = std::move(held);
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
