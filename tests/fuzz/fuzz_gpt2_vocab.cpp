// A GPT-2 tokenizer's own files (vocab.json, then merges.txt after a "--8<--" line):
// damaged or hostile files are refused with a clear error; files that load encode and
// decode without a crash.
#include "fuzz_support.h"

#include "tokenizer/gpt2_bpe.h"

using namespace baton;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto parts = fuzz::splitParts(fuzz::asText(data, size), 3);
    auto t = engine::Gpt2BpeTokenizer::fromData(parts[0], parts[1]);
    if (!t) {
        fuzz::check(!t.error().message.empty(), "an error says what is wrong");
        return 0;
    }
    const auto ids = (*t)->encode(parts[2]);
    for (int32_t id : ids)
        fuzz::check(id >= 0 && id < (*t)->vocabSize(), "ids inside the vocabulary");
    (void)(*t)->decode(ids);
    return 0;
}
