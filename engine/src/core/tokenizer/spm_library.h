// Process-wide handle on the dlopen()ed baton_spm module (see spm_abi.h).
#pragma once

#include "baton/engine/error.h"
#include "tokenizer/spm_abi.h"

#include <string>

namespace baton::engine {

struct SpmLibrary {
    BatonSpmLoadFn load = nullptr;
    BatonSpmFreeFn free = nullptr;
    BatonSpmVocabSizeFn vocabSize = nullptr;
    BatonSpmEncodeFn encode = nullptr;
    BatonSpmPieceFn piece = nullptr;
    BatonSpmPieceKindFn pieceKind = nullptr;
    BatonSpmSpecialIdFn specialId = nullptr;
    BatonSpmDecodeFn decode = nullptr;
    BatonSpmTrainFn train = nullptr;
    std::string path;
};

// Finds and loads the module once: $BATON_SPM_MODULE, then beside the executable
// (../lib/baton/ or the same folder), then the build tree.
Result<const SpmLibrary*> spmLibrary();

} // namespace baton::engine
