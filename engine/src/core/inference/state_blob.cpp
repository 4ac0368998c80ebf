#include "inference/state_blob.h"

#include "baton/engine/generator.h"
#include "util/hash.h"

#include <algorithm>
#include <cstring>

namespace baton::engine {

namespace {

constexpr char kStateMagic[8] = {'B', 'A', 'T', 'O', 'N', 'S', 'T', '\0'};

class BlobWriter {
public:
    template <typename T>
    void put(const T& v) {
        const auto* p = reinterpret_cast<const uint8_t*>(&v);
        bytes.insert(bytes.end(), p, p + sizeof(T));
    }
    void putBytes(const void* data, size_t n) {
        const auto* p = static_cast<const uint8_t*>(data);
        bytes.insert(bytes.end(), p, p + n);
    }
    std::vector<uint8_t> bytes;
};

class BlobReader {
public:
    BlobReader(const std::vector<uint8_t>& b, size_t end)
        : m_b(b)
        , m_end(end) {}
    template <typename T>
    bool get(T& v) {
        return getBytes(&v, sizeof(T));
    }
    bool getBytes(void* out, size_t n) {
        if (n > m_end - m_pos)
            return false;
        if (n)
            std::memcpy(out, m_b.data() + m_pos, n);
        m_pos += n;
        return true;
    }
    size_t left() const { return m_end - m_pos; }

private:
    const std::vector<uint8_t>& m_b;
    size_t m_end;
    size_t m_pos = 0;
};

Error corrupt(const std::string& what) {
    return makeError(ErrorCode::StateCorrupt, "the saved state is damaged: " + what);
}

} // namespace

std::vector<uint8_t> encodeStateBlob(const StateBlob& s) {
    BlobWriter out;
    out.putBytes(kStateMagic, sizeof(kStateMagic));
    out.put(kStateFormatVersion);
    char identity[16] = {};
    std::memcpy(identity, s.identity.data(), std::min<size_t>(16, s.identity.size()));
    out.putBytes(identity, 16);
    out.put(s.window);
    out.put(s.overlap);
    out.put(s.width);
    out.put(s.insertBlock);
    out.put(s.slots);
    out.put(s.pinned);
    out.put(uint8_t(s.hasState ? 1 : 0));
    out.put(s.windowStart);
    out.put(s.streamLength);
    out.put(s.rollovers);
    out.put(uint32_t(s.tokens.size()));
    out.putBytes(s.tokens.data(), s.tokens.size() * sizeof(int32_t));
    if (s.hasState)
        out.putBytes(s.state.data(), s.state.size() * sizeof(float));
    out.putBytes(s.pooled.data(), s.pooled.size() * sizeof(float));
    ContentHash h;
    h.update(out.bytes.data(), out.bytes.size());
    out.put(h.digest());
    return std::move(out.bytes);
}

Result<StateBlob> decodeStateBlob(const std::vector<uint8_t>& blob) {
    if (blob.size() < sizeof(kStateMagic) + 4 + 8 ||
        std::memcmp(blob.data(), kStateMagic, sizeof(kStateMagic)) != 0)
        return corrupt("it is not a Baton state");
    StateBlob s;
    std::memcpy(&s.version, blob.data() + sizeof(kStateMagic), 4);
    if (s.version < 1 || s.version > kStateFormatVersion)
        return makeError(ErrorCode::StateVersion, "the saved state has format version " +
                                                      std::to_string(s.version) +
                                                      "; this build reads versions 1 to " +
                                                      std::to_string(kStateFormatVersion) +
                                                      " (it will be recomputed from the text)");
    uint64_t stored = 0;
    std::memcpy(&stored, blob.data() + blob.size() - 8, 8);
    ContentHash h;
    h.update(blob.data(), blob.size() - 8);
    if (h.digest() != stored)
        return corrupt("checksum mismatch");

    BlobReader in(blob, blob.size() - 8);
    char magic[8], identity[16];
    uint32_t version = 0, count = 0;
    uint8_t hasState = 0;
    if (!in.getBytes(magic, 8) || !in.get(version) || !in.getBytes(identity, 16) ||
        !in.get(s.window) || !in.get(s.overlap) || !in.get(s.width) || !in.get(s.insertBlock) ||
        (version >= 2 && !in.get(s.slots)) || (version >= 3 && !in.get(s.pinned)) ||
        !in.get(hasState) || !in.get(s.windowStart) || !in.get(s.streamLength) ||
        !in.get(s.rollovers) || !in.get(count))
        return corrupt("it is too short");
    s.identity.assign(identity, 16);
    s.hasState = hasState != 0;
    if (version < 3)
        s.pinned = -1;
    if (hasState > 1 || s.window < 1 || s.overlap < 0 || s.overlap >= s.window || s.width < 1 ||
        s.slots < 1 || s.slots > 64 || s.width > (1 << 20) || s.pinned < -1 || s.pinned >= s.window)
        return corrupt("impossible settings");
    // Every roll-over moves the window's start on (also an early one, to make room for
    // guidance), so there are no more roll-overs than tokens before the open window.
    if (count + uint32_t(std::max(0, s.pinned)) > uint32_t(s.window) || s.windowStart < 0 ||
        s.windowStart > (int64_t(1) << 50) || s.windowStart + int64_t(count) != s.streamLength ||
        s.rollovers < 0 || s.rollovers > s.windowStart)
        return corrupt("inconsistent positions");
    // Lengths are checked against the bytes there before anything is allocated: a blob
    // that claims 2^31 tokens must not allocate 8 GB to find out it lies.
    if (in.left() < size_t(count) * sizeof(int32_t))
        return corrupt("it is too short");
    s.tokens.resize(count);
    if (!in.getBytes(s.tokens.data(), count * sizeof(int32_t)))
        return corrupt("it is too short");
    const size_t width = size_t(s.slots) * size_t(s.width);
    if (s.hasState) {
        if (in.left() < width * sizeof(float))
            return corrupt("it is too short");
        s.state.resize(width);
        in.getBytes(s.state.data(), width * sizeof(float));
    }
    // A recurrent model's blob ends with its running pool (always, with a state or not).
    if (in.left() == width * sizeof(float)) {
        s.pooled.resize(width);
        in.getBytes(s.pooled.data(), width * sizeof(float));
    } else if (in.left() != 0) {
        return corrupt("unexpected trailing bytes");
    }
    if (s.hasState && s.pooled.empty())
        return corrupt("a state without its pool");
    return s;
}

} // namespace baton::engine
