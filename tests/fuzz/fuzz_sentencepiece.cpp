// A SentencePiece model file (tokenizer.model) through Baton's module (baton_spm,
// loaded with dlopen): refused with an error or loaded; a loaded model encodes and
// decodes a text with invalid UTF-8 in it without a crash.
#include "fuzz_support.h"

#include "tokenizer/sentencepiece_tokenizer.h"

using namespace baton;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto t = engine::SentencePieceTokenizer::fromData(fuzz::asText(data, size));
    if (!t) {
        fuzz::check(!t.error().message.empty(), "an error says what is wrong");
        return 0;
    }
    const auto ids = (*t)->encode("It is a truth universally acknowledged \xff\xfe caf\xc3\xa9.");
    for (int32_t id : ids)
        fuzz::check(id >= 0 && id < (*t)->vocabSize(), "ids inside the vocabulary");
    (void)(*t)->decode(ids);
    (void)(*t)->decode({-1, 0, (*t)->vocabSize(), 1 << 30});
    return 0;
}
