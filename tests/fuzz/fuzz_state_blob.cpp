// A saved recurrent state (the blob stored in the database and exported): refused as
// corrupt or from another version, or decoded into a blob whose lengths agree with its
// shape, which encodes back to the same blob. An input whose first byte is odd gets
// a correct checksum appended (the rest of it is the blob without one), so the fuzzer
// reaches the structure behind the checksum.
#include "fuzz_support.h"

#include "inference/state_blob.h"
#include "util/hash.h"

#include <cstring>

using namespace baton;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0)
        return 0;
    std::vector<uint8_t> bytes(data + 1, data + size);
    if (data[0] & 1) {
        engine::ContentHash h;
        h.update(bytes.data(), bytes.size());
        const uint64_t digest = h.digest();
        const auto* d = reinterpret_cast<const uint8_t*>(&digest);
        bytes.insert(bytes.end(), d, d + sizeof(digest));
    }
    auto blob = engine::decodeStateBlob(bytes);
    if (!blob) {
        fuzz::check(!blob.error().message.empty(), "an error says what is wrong");
        return 0;
    }
    const engine::StateBlob& b = *blob;
    fuzz::check(b.window > 0 && b.overlap >= 0 && b.overlap < b.window, "usable windows");
    fuzz::check(int64_t(b.tokens.size()) <= b.window, "the open window fits");
    if (b.hasState)
        fuzz::check(b.state.size() == size_t(b.slots) * size_t(b.width), "state size");
    auto again = engine::decodeStateBlob(engine::encodeStateBlob(b));
    fuzz::check(bool(again), "an accepted blob encodes to a readable one");
    // Bytes, not floats: a state may hold NaN (it is the caller's to refuse).
    auto same = [](const std::vector<float>& x, const std::vector<float>& y) {
        return x.size() == y.size() &&
               (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
    };
    fuzz::check(again->tokens == b.tokens && same(again->state, b.state) &&
                    same(again->pooled, b.pooled) && again->windowStart == b.windowStart &&
                    again->streamLength == b.streamLength,
                "the round trip keeps the blob");
    return 0;
}
