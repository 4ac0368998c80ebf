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
                   const std::function<bool(size_t stream, int64_t boundary)>& hasState) {
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
        // best, and none at or before the best so far can do better.
        for (int64_t q = n; q >= T && (!best || q > best->promptAt); --q) {
            const auto found = byAnchor.find(hashTokens(prompt.data() + q - anchor, anchor));
            if (found == byAnchor.end())
                continue;
            bool matched = false;
            for (auto b = found->second.rbegin(); b != found->second.rend() && !matched; ++b) {
                if (!std::equal(prompt.begin() + long(q - T), prompt.begin() + long(q),
                                s.begin() + long(*b - T)))
                    continue;
                int64_t length = T; // the shared stretch, back from q and *b
                while (length < q && length < *b &&
                       prompt[size_t(q - length - 1)] == s[size_t(*b - length - 1)])
                    ++length;
                if (!headHolds(prompt, streams[i], shared, q - length, *b - length, decode) ||
                    !hasState(i, *b))
                    continue;
                best = StreamMatch{i, *b, q};
                matched = true;
            }
            if (matched)
                break;
        }
    }
    return best;
}

} // namespace baton::server
