// Training corpora: text, Markdown and EPUB files, library shards (tar archives of
// works) and folders of them, Project Gutenberg boilerplate removed; tokenized once
// into a token store (token_store.h).
#pragma once

#include "baton/engine/cancel.h"
#include "baton/engine/error.h"
#include "baton/engine/tokenizer.h"
#include "baton/engine/windows.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace baton::engine {

struct Document {
    std::string name; // the file path
    std::string text;
};

// Removes a Project Gutenberg header (up to and including the "*** START OF ..."
// line) and everything from the "*** END OF ..." line or the licence on. Text
// without those markers is returned unchanged.
std::string stripGutenberg(std::string_view text);

// A file or library shard a corpus reads.
struct TokenSource {
    std::string path;
    uint64_t bytes = 0;
    bool shard = false; // a library shard (isLibraryShard): many works, else one book
};

// The sources under `paths`: book files (.txt, .md, .markdown, .epub), library shards
// (.tar, .tar.xz, .txz), and folders searched recursively in name order (hidden entries
// skipped). FileNotFound for a missing path or a folder that holds no source.
Result<std::vector<TokenSource>> listTokenSources(const std::vector<std::string>& paths);

// The documents of one source, one at a time: a book file is one document, a shard one
// per work, each cleaned (stripGutenberg; with `unwrap`, hard-wrapped lines joined and
// verse numbers dropped by unwrapText). Invalid UTF-8 and a document with no text are
// errors naming it. onDocument may return false to stop; progress gets the share of
// the source read.
Result<void> readSourceDocuments(const TokenSource& source, bool unwrap,
                                 const std::function<bool(Document&&)>& onDocument,
                                 const CancelToken& cancel = {},
                                 const std::function<void(double)>& progress = {});

// Every document of the sources under `paths`, in memory (for training a tokenizer;
// a run's training data goes through a token store instead).
Result<std::vector<Document>> loadCorpus(const std::vector<std::string>& paths,
                                         bool unwrap = false);

// Whole documents of the corpus spread evenly over it, up to maxBytes of text (every
// document when the corpus is smaller): every k-th document in source order, k from
// the corpus's size counted in a first pass. The documents `skipWorks` names (the
// validation works, by namesWork()) are left out. For training a tokenizer on a sample.
Result<std::vector<Document>> sampleCorpus(const std::vector<std::string>& paths, bool unwrap,
                                           uint64_t maxBytes,
                                           const std::vector<std::string>& skipWorks = {});

// One document's token ids, a view into the corpus's storage.
struct TokenSpan {
    const int32_t* ids = nullptr;
    size_t count = 0;
    size_t size() const { return count; }
    bool empty() const { return count == 0; }
    const int32_t* data() const { return ids; }
    const int32_t* begin() const { return ids; }
    const int32_t* end() const { return ids + count; }
    int32_t operator[](size_t i) const { return ids[i]; }
};

struct TokenizedCorpus {
    std::vector<std::string> names;
    std::vector<TokenSpan> docs;
    std::shared_ptr<const void> storage; // what docs point into (mapped files or vectors)

    int64_t tokenCount() const;
    // Documents [begin, end), sharing the storage.
    TokenizedCorpus slice(size_t begin, size_t end) const;
    static TokenizedCorpus fromVectors(std::vector<std::string> names,
                                       std::vector<std::vector<int32_t>> docs);
};

// A training sequence: W consecutive full windows of one document, starting at
// window `firstSpan` of that document's window plan.
struct Sequence {
    int doc = 0;
    int64_t firstSpan = 0;
};

// Plans each document's windows (method.md section 3) into `spans` and groups its
// full windows into sequences of W consecutive windows. A sequence never crosses a
// document boundary; windows left at a document's end (fewer than W, or not full)
// are not trained on.
std::vector<Sequence> planSequences(const TokenizedCorpus& corpus, const WindowSettings& windows,
                                    int bpttWindows, std::vector<std::vector<WindowSpan>>& spans);

} // namespace baton::engine
