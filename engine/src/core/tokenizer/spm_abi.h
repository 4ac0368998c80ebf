// The C interface of baton_spm, the module that wraps SentencePiece.
//
// Debian's libsentencepiece bundles its own protobuf-lite, which crashes a process
// that also loads LibTorch's protobuf. The module is therefore loaded with
// dlopen(RTLD_LOCAL | RTLD_DEEPBIND) and only C types cross this boundary
// (../shared/docs/platform-notes.md section 8).
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BATON_SPM_ABI_VERSION 1

typedef struct BatonSpmModel BatonSpmModel;

// Piece kinds returned by baton_spm_piece_kind.
enum {
    BATON_SPM_NORMAL = 0,
    BATON_SPM_CONTROL = 1,
    BATON_SPM_UNKNOWN = 2,
    BATON_SPM_BYTE = 3,
    BATON_SPM_UNUSED = 4
};

typedef int (*BatonSpmAbiVersionFn)(void);
// Loads a serialized model; on failure returns NULL and writes a message to err.
typedef BatonSpmModel* (*BatonSpmLoadFn)(const char* data, size_t size, char* err, size_t errCap);
typedef void (*BatonSpmFreeFn)(BatonSpmModel*);
typedef int (*BatonSpmVocabSizeFn)(const BatonSpmModel*);
// Encodes UTF-8 text. Returns the number of ids (which may exceed cap: call again
// with a larger buffer), or -1 on error.
typedef int64_t (*BatonSpmEncodeFn)(const BatonSpmModel*, const char* text, size_t len,
                                    int32_t* out, size_t cap);
// Copies the piece's UTF-8 text; returns its length (may exceed cap), -1 if out of range.
typedef int64_t (*BatonSpmPieceFn)(const BatonSpmModel*, int32_t id, char* out, size_t cap);
typedef int (*BatonSpmPieceKindFn)(const BatonSpmModel*, int32_t id);
// which: 0 unk, 1 bos, 2 eos, 3 pad. Returns -1 when the model has none.
typedef int (*BatonSpmSpecialIdFn)(const BatonSpmModel*, int which);
// Decodes ids; returns the text length (may exceed cap), -1 on error.
typedef int64_t (*BatonSpmDecodeFn)(const BatonSpmModel*, const int32_t* ids, size_t n, char* out,
                                    size_t cap);
// Trains a model on `count` texts (each split into lines) with trainer options
// given as key/value pairs (SentencePiece's own flag names). Writes the
// serialized model to `outPath`. Returns 0 on success.
typedef int (*BatonSpmTrainFn)(const char* const* texts, const size_t* lengths, size_t count,
                               const char* const* keys, const char* const* values,
                               size_t optionCount, const char* outPath, char* err, size_t errCap);

#ifdef __cplusplus
}
#endif
