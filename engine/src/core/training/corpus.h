// Training corpora: text and Markdown files or folders, Project Gutenberg
// boilerplate removed, tokenized once and cached beside the run.
#pragma once

#include "baton/engine/error.h"
#include "baton/engine/tokenizer.h"
#include "baton/engine/windows.h"

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

// Files (.txt, .md, .markdown) and folders (searched recursively, in name order).
// Each file is one document; invalid UTF-8 and empty documents are errors. With
// `unwrap`, hard-wrapped lines are joined and verse numbers dropped (unwrapText).
Result<std::vector<Document>> loadCorpus(const std::vector<std::string>& paths,
                                         bool unwrap = false);

struct TokenizedCorpus {
    std::vector<std::string> names;
    std::vector<std::vector<int32_t>> docs;

    int64_t tokenCount() const;
};

// Tokenizes the documents, or reads the cache in cacheDir written by an earlier
// call with the same tokenizer and texts.
Result<TokenizedCorpus> tokenizeCached(const std::vector<Document>& docs,
                                       const Tokenizer& tokenizer, const std::string& cacheDir);

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
