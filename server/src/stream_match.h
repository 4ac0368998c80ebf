// Where a prompt whose front the client cut continues a token stream the server has
// already read. Front ends keep a story under their context size by cutting its
// front (KoboldAI Lite at its "Context Size", SillyTavern at its own), and they put
// the memory and world info before the cut story and the author's note a few lines
// before its end, so from one request to the next the prompt is neither a prefix nor
// a suffix of the last one. But its story is a stretch of the stream the server read
// for the last request: this finds that stretch at a window boundary of the stream,
// so the request continues from the state saved there and reads only what follows.
//
// What the model then reads: the stream up to the boundary (through the saved state:
// the whole story the server has seen, also what the client cut) and the prompt after
// it. That is what it would read had the client sent the whole story.
//
// A match is accepted only when the prompt, from its start, is the part it shares
// with the client's previous prompt (the memory, world info) and then the stretch of
// the stream up to the boundary, with at most a few tokens between them that are the
// story's cut edge tokenized anew. A changed memory or a new world-info entry is
// there, not in the stream: no match, the prompt is read as sent. A prompt that goes on
// from the client's previous one (it cut nothing more this time) must continue it
// where the previous request put it in the stream: a story that repeats itself does not
// match itself a period off.
//
// Torch-free and model-free (the caller gives the decoder), so it is tested on its own.
#pragma once

#include <baton/engine/windows.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace baton::server {

// A stream the server read and generated for a request, with the prompt the client
// sent for it.
struct ReadStream {
    std::vector<int32_t> tokens;       // every token the generator read or generated
    std::vector<int32_t> clientPrompt; // the client's prompt as read (start-of-text first)
    // Where the client's prompt was read in the stream: its token i at i + offset (0
    // when it was read as sent; boundary - promptAt when it continued a match).
    int64_t offset = 0;
};

struct StreamMatch {
    size_t stream = 0;    // index into the streams given
    int64_t boundary = 0; // a window boundary of that stream: the state after its first
                          // `boundary` tokens
    int64_t promptAt = 0; // the prompt continues from here after that state
};

// The positions where a stream read from its start in windows `w` fills a window:
// T, T + (T - o), T + 2 (T - o), ... up to `length`.
std::vector<int64_t> windowBoundaries(int64_t length, const engine::WindowSettings& w);

// The match that leaves the least of `prompt` to read (the largest promptAt, above
// `above`: what a saved prefix covers already), or none. The window before the
// boundary must equal the prompt's window before promptAt (T tokens); `hasState(stream,
// boundary)` says whether a state is saved there. `decode` turns token ids into text
// (for the cut edge). At most 256 candidates per stream are compared in full, so its
// time is bounded whatever the prompt.
std::optional<StreamMatch>
matchTrimmedPrompt(const std::vector<int32_t>& prompt, const std::vector<ReadStream>& streams,
                   const engine::WindowSettings& w,
                   const std::function<std::string(const std::vector<int32_t>&)>& decode,
                   const std::function<bool(size_t stream, int64_t boundary)>& hasState,
                   int64_t above = 0);

} // namespace baton::server
