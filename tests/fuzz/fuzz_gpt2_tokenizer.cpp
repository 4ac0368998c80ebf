// GPT-2's byte-level BPE with its real vocabulary (../shared/tokenizers/gpt2): any
// bytes encode, and decode(encode(s)) == s for every byte string (invalid UTF-8
// included); the ids read as a token sequence decode without a crash, ids outside the
// vocabulary included.
#include "fuzz_support.h"

#include "tokenizer/gpt2_bpe.h"

#include <memory>

using namespace baton;

namespace {
const engine::Gpt2BpeTokenizer& tokenizer() {
    static const std::shared_ptr<engine::Gpt2BpeTokenizer> t = [] {
        const std::string dir = BATON_SHARED_DIR "/tokenizers/gpt2";
        auto r = engine::Gpt2BpeTokenizer::fromFiles(dir + "/vocab.json", dir + "/merges.txt");
        fuzz::check(bool(r), "the shared GPT-2 tokenizer loads");
        return *r;
    }();
    return *t;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto text = fuzz::asText(data, size);
    const auto& t = tokenizer();
    const auto ids = t.encode(text);
    for (int32_t id : ids)
        fuzz::check(id >= 0 && id < t.vocabSize(), "ids inside the vocabulary");
    fuzz::check(t.decode(ids) == text, "decode(encode(s)) == s");
    std::string streamed;
    for (int32_t id : ids)
        streamed += t.tokenBytes(id);
    fuzz::check(streamed == text, "tokenBytes streams the same text");
    // The bytes as ids (any value, in and out of range).
    std::vector<int32_t> raw(size / 4);
    for (size_t i = 0; i < raw.size(); ++i)
        raw[i] = int32_t(uint32_t(data[4 * i]) | uint32_t(data[4 * i + 1]) << 8 |
                         uint32_t(data[4 * i + 2]) << 16 | uint32_t(data[4 * i + 3]) << 24);
    (void)t.decode(raw);
    for (int32_t id : raw)
        (void)t.tokenBytes(id);
    return 0;
}
