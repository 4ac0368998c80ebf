#include "stream_match.h"

#include <algorithm>
#include <unordered_map>

namespace baton::server {

namespace {

// Tokens hashed to find the windows a prompt may share with a stream.
constexpr int64_t kAnchor = 16;
// How many tokens at the story's cut edge may be tokenized differently from the stream
// (the client cut inside a word or between a word and its space).
constexpr int64_t kMaxEdge = 32;
// How far the shared stretch may reach back into the prompt's head (the memory's last
// tokens equal to the story's before the cut: a line break) and still be a cut story.
constexpr int64_t kHeadSlack = 4;
// Candidate boundaries compared in full (a window compared, the shared stretch followed
// back), per prompt position and per stream: what bounds the time a hostile prompt can
// take.
constexpr int kChecksPerPosition = 4;
constexpr int kMaxChecks = 256;
// Tokens of the stream before the shared stretch that the cut edge is looked for in.
constexpr int64_t kEdgeContext = 64;

uint64_t hashTokens(const int32_t* ids, int64_t n) {
    uint64_t h = 0xCBF29CE484222325ULL;
    for (int64_t i = 0; i < n; ++i) {
        h ^= static_cast<uint32_t>(ids[i]);
        h *= 0x100000001B3ULL;
        h ^= h >> 29;
    }
    return h;
}

int64_t commonPrefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
    const auto n = std::min(a.size(), b.size());
    return int64_t(std::mismatch(a.begin(), a.begin() + long(n), b.begin()).first - a.begin());
}

bool endsWith(const std::string& text, const std::string& end) {
    return text.size() >= end.size() &&
           text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// Whether the prompt before the shared stretch (which starts at promptStart in the
// prompt and at streamStart in the stream) is what it shares with the client's
// previous prompt (`shared` tokens), and then at most the story's cut edge tokenized
// anew; and the client cut at least what it cut before (the stretch is no nearer the
// stream's start than the previous prompt's story). A prompt that goes on from the
// whole previous prompt, or a stretch that starts inside the part it shares with it, is
// the previous prompt going on: it must keep the place the previous request gave it in
// the stream.
bool headHolds(const std::vector<int32_t>& prompt, const ReadStream& stream, int64_t shared,
               int64_t promptStart, int64_t streamStart,
               const std::function<std::string(const std::vector<int32_t>&)>& decode) {
    const int64_t shift = streamStart - promptStart;
    if (shared >= int64_t(stream.clientPrompt.size()) || promptStart + kHeadSlack < shared)
        return shift == stream.offset;    // the previous prompt going on
    if (shift + kMaxEdge < stream.offset) // the client cuts more as the story grows, not less
        return false;
    if (promptStart - shared > kMaxEdge)
        return false;
    auto text = [&](const std::vector<int32_t>& ids, int64_t from, int64_t to) {
        return decode({ids.begin() + long(from), ids.begin() + long(to)});
    };
    const std::string edge = promptStart > shared ? text(prompt, shared, promptStart) : "";
    // What the client cut since its previous prompt: from where that prompt's story
    // stood in the stream to the stretch. More than the edge the prompt keeps of it (the
    // same text tokenized anew is no cut), and ending with that edge.
    const int64_t previous = std::clamp<int64_t>(shared + stream.offset, 0, streamStart);
    const std::string removed = text(stream.tokens, previous, streamStart);
    const std::string before =
        text(stream.tokens, std::max<int64_t>(0, streamStart - kEdgeContext), streamStart);
    return removed.size() > edge.size() && endsWith(before, edge);
}

} // namespace

std::vector<int64_t> windowBoundaries(int64_t length, const engine::WindowSettings& w) {
    std::vector<int64_t> out;
    const int64_t stride = w.window - w.overlap;
    if (w.window <= 0 || stride <= 0)
        return out;
    for (int64_t b = w.window; b <= length; b += stride)
        out.push_back(b);
    return out;
}

std::optional<StreamMatch>
matchTrimmedPrompt(const std::vector<int32_t>& prompt, const std::vector<ReadStream>& streams,
                   const engine::WindowSettings& w,
                   const std::function<std::string(const std::vector<int32_t>&)>& decode,
                   const std::function<bool(size_t stream, int64_t boundary)>& hasState,
                   int64_t above) {
    const int64_t T = w.window;
    const int64_t n = int64_t(prompt.size());
    if (T <= 0 || n < T)
        return std::nullopt;
    const int64_t anchor = std::min(kAnchor, T);
    std::optional<StreamMatch> best;
    for (size_t i = 0; i < streams.size(); ++i) {
        const std::vector<int32_t>& s = streams[i].tokens;
        // The stream's window boundaries by the hash of the tokens just before them.
        std::unordered_map<uint64_t, std::vector<int64_t>> byAnchor;
        for (int64_t b : windowBoundaries(int64_t(s.size()), w))
            byAnchor[hashTokens(s.data() + b - anchor, anchor)].push_back(b);
        if (byAnchor.empty())
            continue;
        const int64_t shared = commonPrefix(prompt, streams[i].clientPrompt);
        // The prompt's positions from its end: the first that matches is this stream's
        // best, and none at or before the best so far (or `above`) can do better. The
        // candidates compared in full are bounded (a few per position, the one at the
        // previous request's place first; a few hundred per stream), so a prompt that
        // repeats one token (every boundary in one bucket) takes a bounded time.
        const int64_t offset = streams[i].offset;
        int checks = 0;
        auto tryBoundary = [&](int64_t q, int64_t b) {
            if (!hasState(i, b))
                return false;
            ++checks;
            if (!std::equal(prompt.begin() + long(q - T), prompt.begin() + long(q),
                            s.begin() + long(b - T)))
                return false;
            // The shared stretch, back from q and b; below what the prompt shares with
            // the previous one, only its shift matters (headHolds), not where it starts.
            const int64_t low = std::max<int64_t>(0, shared - kHeadSlack - 1);
            int64_t length = T;
            while (length < q && length < b && q - length > low &&
                   prompt[size_t(q - length - 1)] == s[size_t(b - length - 1)])
                ++length;
            return headHolds(prompt, streams[i], shared, q - length, b - length, decode);
        };
        for (int64_t q = n;
             q >= T && q > above && (!best || q > best->promptAt) && checks < kMaxChecks; --q) {
            const auto found = byAnchor.find(hashTokens(prompt.data() + q - anchor, anchor));
            if (found == byAnchor.end())
                continue;
            const std::vector<int64_t>& bs = found->second; // ascending
            std::optional<int64_t> matched;
            if (std::binary_search(bs.begin(), bs.end(), q + offset) && tryBoundary(q, q + offset))
                matched = q + offset;
            int here = 0;
            for (auto b = bs.rbegin();
                 b != bs.rend() && !matched && here < kChecksPerPosition && checks < kMaxChecks;
                 ++b)
                if (*b != q + offset && (++here, tryBoundary(q, *b)))
                    matched = *b;
            if (matched) {
                best = StreamMatch{i, *matched, q};
                break;
            }
        }
    }
    return best;
}

} // namespace baton::server
