// Token stores: a training corpus tokenized once into memory-mapped files, so that a
// corpus of hundreds of millions of tokens costs page cache, not private memory, and a
// run that starts again reads it back at once.
//
// The sources (text files, EPUB books, library shards) are grouped into pieces: a
// library shard alone, consecutive files up to TokenStoreOptions::pieceBytes of source.
// Several threads tokenize the pieces, one document at a time (never a whole corpus in
// memory), each into one file, piece-IDENTITY.tok, whose identity hashes the tokenizer,
// the text settings, the store's format and each source's path and content (a hash of
// its bytes, read at each build: a copied or touched source is not tokenized again). A build that
// is cancelled or killed keeps the pieces it finished; the next one with the same identities maps
// them and tokenizes only the rest. A piece whose trailer, sizes or checksum do not hold is
// rebuilt, never read.
//
// A piece file: the int32 token ids of all its documents, the uint64 offsets of the
// documents in them (count + 1), the documents' names each ended by '\n', then a 64-byte
// trailer: magic "BATONTOK", format version, document count, token count, names' bytes,
// a ContentHash of everything before the trailer, and the piece's identity.
#pragma once

#include "baton/engine/cancel.h"
#include "baton/engine/error.h"
#include "baton/engine/tokenizer.h"
#include "training/corpus.h"

#include <cstdint>
#include <string>
#include <vector>

namespace baton::engine {

struct TokenStoreOptions {
    std::string folder;  // where the pieces live (made when missing)
    bool unwrap = false; // join hard-wrapped lines (unwrapText)
    int threads = 0;     // tokenizing threads; 0: one per core
    uint64_t pieceBytes = uint64_t(32) << 20;
};

struct TokenStoreStats {
    int piecesBuilt = 0, piecesReused = 0, piecesDamaged = 0;
    uint64_t sourceBytes = 0;
};

// Builds what is missing and maps every piece: the documents in source order, each a
// cleaned text (stripGutenberg, unwrap when asked) tokenized whole. An empty document,
// invalid UTF-8 or an unreadable source is an error naming it; progress (on the calling
// thread) gets the share of source bytes done; cancel stops after the documents being
// tokenized (Cancelled), keeping the pieces already written.
Result<TokenizedCorpus>
buildTokenStore(const std::vector<TokenSource>& sources, const Tokenizer& tokenizer,
                const TokenStoreOptions& options, const JobProgress& progress = {},
                const CancelToken& cancel = {}, TokenStoreStats* stats = nullptr);

} // namespace baton::engine
