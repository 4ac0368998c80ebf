// Recall's text rules on any bytes (a story can hold any script, invalid UTF-8 and FTS5
// syntax): the index's chunks (storage/recall_store.h) follow each other, stay inside
// the text, are at most kRecallChunkBytes and leave out only white space; the query's
// terms (story/recall.h) are at most kRecallMaxTerms words of the text, once each.
#include "fuzz_support.h"

#include <baton/storage/recall_store.h>
#include <baton/story/recall.h>

#include <string>

using namespace baton;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    size_t at = 0;
    for (const auto& c : storage::recallChunks(text)) {
        fuzz::check(c.start >= at && c.end > c.start && c.end <= text.size(),
                    "chunks follow each other inside the text");
        fuzz::check(c.end - c.start <= storage::kRecallChunkBytes, "a chunk is at most the size");
        for (size_t i = at; i < c.start; ++i)
            fuzz::check(text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n',
                        "only white space is left out");
        at = c.end;
    }
    for (size_t i = at; i < text.size(); ++i)
        fuzz::check(text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n',
                    "only white space is left out at the end");
    const auto terms = story::recallTerms(text);
    fuzz::check(terms.size() <= story::kRecallMaxTerms, "at most the terms' limit");
    for (const auto& t : terms)
        fuzz::check(!t.empty() && text.find(t) != std::string::npos,
                    "a term is a word of the text");
    return 0;
}
