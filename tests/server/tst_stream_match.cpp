// Where a prompt whose front the client cut continues a stream the server read
// (server/src/stream_match.h), on token sequences built to the shape front ends send:
// a pure tail, memory before the cut story and an author's note near its end, a cut
// edge tokenized anew, a changed memory (no match), a boundary without a saved state.
// Torch-free: the sanitizer build runs it too.
#include "test_support.h"

#include "stream_match.h"

#include <QtTest>

#include <random>

using namespace baton;
using namespace baton::server;

namespace {

constexpr int32_t kStart = 0;
// Tokens 1-26 are the letters a-z; 100 + i is the pair of letters (i / 26, i % 26), so
// the same text has two tokenizations, as a cut word has.
std::string decode(const std::vector<int32_t>& ids) {
    std::string text;
    for (int32_t id : ids) {
        if (id >= 1 && id <= 26)
            text += char('a' + id - 1);
        else if (id >= 100 && id < 100 + 26 * 26)
            text += {char('a' + (id - 100) / 26), char('a' + (id - 100) % 26)};
        else
            text += '#';
    }
    return text;
}

std::vector<int32_t> randomLetters(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int32_t> letter(1, 26);
    std::vector<int32_t> ids(n);
    for (auto& id : ids)
        id = letter(rng);
    return ids;
}

std::vector<int32_t> cat(std::initializer_list<std::vector<int32_t>> parts) {
    std::vector<int32_t> out;
    for (const auto& p : parts)
        out.insert(out.end(), p.begin(), p.end());
    return out;
}

std::vector<int32_t> slice(const std::vector<int32_t>& v, size_t from, size_t to) {
    return {v.begin() + long(from), v.begin() + long(to)};
}

bool anyState(size_t, int64_t) {
    return true;
}

} // namespace

class TestStreamMatch : public QObject {
    Q_OBJECT
    engine::WindowSettings m_w{16, 0};
    std::vector<int32_t> m_story = randomLetters(400, 1);
    std::vector<int32_t> m_memory = randomLetters(10, 2);

private Q_SLOTS:
    void initTestCase() { baton::test::initTestProcess(); }

    void windowBoundaries() {
        QCOMPARE(server::windowBoundaries(40, {8, 0}), (std::vector<int64_t>{8, 16, 24, 32, 40}));
        QCOMPARE(server::windowBoundaries(30, {8, 2}), (std::vector<int64_t>{8, 14, 20, 26}));
        QVERIFY(server::windowBoundaries(7, {8, 0}).empty());
    }

    // The client cut the front and added text: the prompt continues from the last
    // boundary whose window it shares.
    void pureTail() {
        const auto stream = cat({{kStart}, slice(m_story, 0, 200)});
        const auto prompt = cat({{kStart}, slice(m_story, 100, 250)});
        const auto m = matchTrimmedPrompt(prompt, {{stream, stream}}, m_w, decode, anyState);
        QVERIFY(m);
        QCOMPARE(m->stream, size_t(0));
        QCOMPARE(m->boundary, int64_t(192)); // the last boundary in the stream
        // The stream's token at 192 is story[191]; in the prompt it sits at 1 + 91.
        QCOMPARE(m->promptAt, int64_t(92));
    }

    // Memory before the cut story, and the author's note moved further on: the match
    // ends before where the note stood in the stream.
    void memoryAndAuthorsNote() {
        const std::vector<int32_t> note{27, 28, 29};
        const auto stream =
            cat({{kStart}, m_memory, slice(m_story, 0, 150), note, slice(m_story, 150, 180)});
        const auto lastPrompt =
            cat({{kStart}, m_memory, slice(m_story, 0, 150), note, slice(m_story, 150, 160)});
        const auto prompt =
            cat({{kStart}, m_memory, slice(m_story, 40, 190), note, slice(m_story, 190, 210)});
        const auto m = matchTrimmedPrompt(prompt, {{stream, lastPrompt}}, m_w, decode, anyState);
        QVERIFY(m);
        // The note stood at 11 + 150 = 161 in the stream: the last boundary before it
        // with a shared window is 160.
        QCOMPARE(m->boundary, int64_t(160));
        QCOMPARE(m->promptAt, int64_t(11 + 160 - 11 - 40));
        // Continuing there reads the stream's story, then the prompt's.
        auto read = slice(stream, 0, size_t(m->boundary));
        const auto rest = slice(prompt, size_t(m->promptAt), prompt.size());
        read.insert(read.end(), rest.begin(), rest.end());
        QCOMPARE(read,
                 cat({{kStart}, m_memory, slice(m_story, 0, 190), note, slice(m_story, 190, 210)}));
    }

    // The cut fell inside a word, which the prompt tokenizes differently: still a match.
    void cutEdgeTokenizedAnew() {
        const auto stream = cat({{kStart}, m_memory, slice(m_story, 0, 200)});
        const int32_t pair = 100 + (m_story[40] - 1) * 26 + (m_story[41] - 1);
        const auto prompt = cat({{kStart}, m_memory, {pair}, slice(m_story, 42, 230)});
        QCOMPARE(decode({pair}), decode(slice(m_story, 40, 42)));
        const auto m = matchTrimmedPrompt(prompt, {{stream, stream}}, m_w, decode, anyState);
        QVERIFY(m);
        QCOMPARE(m->boundary, int64_t(208));
    }

    // Something new before the story (a changed memory, a world-info entry) is not in
    // the stream: no match, the prompt is read as sent.
    void changedHeadDoesNotMatch() {
        const auto stream = cat({{kStart}, m_memory, slice(m_story, 0, 200)});
        auto memory = m_memory;
        memory[3] = memory[3] % 26 + 1;
        auto prompt = cat({{kStart}, memory, slice(m_story, 40, 230)});
        QVERIFY(!matchTrimmedPrompt(prompt, {{stream, stream}}, m_w, decode, anyState));
        // New text between the memory and the story, longer than a cut edge.
        prompt = cat({{kStart}, m_memory, randomLetters(40, 3), slice(m_story, 40, 230)});
        QVERIFY(!matchTrimmedPrompt(prompt, {{stream, stream}}, m_w, decode, anyState));
        // Text that is not the stream's before the shared stretch.
        prompt = cat({{kStart}, m_memory, {27, 28}, slice(m_story, 40, 230)});
        QVERIFY(!matchTrimmedPrompt(prompt, {{stream, stream}}, m_w, decode, anyState));
    }

    // Only boundaries with a saved state count; the best of several streams wins.
    void statesAndStreams() {
        const auto stream = cat({{kStart}, slice(m_story, 0, 200)});
        const auto prompt = cat({{kStart}, slice(m_story, 100, 250)});
        auto m = matchTrimmedPrompt(prompt, {{stream, stream}}, m_w, decode,
                                    [](size_t, int64_t b) { return b <= 160; });
        QVERIFY(m);
        QCOMPARE(m->boundary, int64_t(160));
        QVERIFY(!matchTrimmedPrompt(prompt, {{stream, stream}}, m_w, decode,
                                    [](size_t, int64_t) { return false; }));
        const auto other = cat({{kStart}, randomLetters(300, 4)});
        const auto longer = cat({{kStart}, slice(m_story, 0, 240)});
        m = matchTrimmedPrompt(prompt, {{other, other}, {stream, stream}, {longer, longer}}, m_w,
                               decode, anyState);
        QVERIFY(m);
        QCOMPARE(m->stream, size_t(2));
        QCOMPARE(m->boundary, int64_t(240));
        // Shorter than a window, or nothing shared: none.
        QVERIFY(
            !matchTrimmedPrompt(slice(prompt, 0, 10), {{stream, stream}}, m_w, decode, anyState));
        QVERIFY(!matchTrimmedPrompt(cat({{kStart}, randomLetters(100, 5)}), {{stream, stream}}, m_w,
                                    decode, anyState));
    }

    // A story that repeats itself, grown and sent again whole: its windows recur a
    // period apart, but only its own place in the stream is a match.
    void periodicStoryKeepsItsPlace() {
        const auto period = randomLetters(20, 6);
        std::vector<int32_t> story{kStart};
        for (int i = 0; i < 12; ++i)
            story.insert(story.end(), period.begin(), period.end());
        const auto stream = slice(story, 0, 200);
        const auto prompt = cat({story, randomLetters(30, 7)});
        const auto m = matchTrimmedPrompt(prompt, {{stream, stream}}, m_w, decode, anyState);
        QVERIFY(m);
        QCOMPARE(m->promptAt, m->boundary);
    }

    // A prompt that continues the client's previous one, which itself continued a
    // match: it keeps that match's place in the stream.
    void continuesAnEarlierMatch() {
        const auto stream = cat({{kStart}, m_memory, slice(m_story, 0, 200)});
        const auto last = cat({{kStart}, m_memory, slice(m_story, 40, 180)});
        const int64_t offset = 40; // the previous prompt's story sat 40 tokens on
        const auto prompt = cat({last, slice(m_story, 180, 240)});
        auto m = matchTrimmedPrompt(prompt, {{stream, last, offset}}, m_w, decode, anyState);
        QVERIFY(m);
        QCOMPARE(m->boundary - m->promptAt, offset);
        QCOMPARE(m->boundary, int64_t(208));
        // Placed elsewhere by the previous request: no match.
        QVERIFY(!matchTrimmedPrompt(prompt, {{stream, last, 0}}, m_w, decode, anyState));
    }

    // A prompt of one token repeated puts every boundary in one bucket: the candidates
    // compared in full are bounded, so this ends at once (it would take hours
    // otherwise), and the stream's place is still found where it holds.
    void repeatedTokensAreBounded() {
        const std::vector<int32_t> run(20000, 5);
        const auto stream = cat({{kStart}, run});
        const auto prompt = cat({{kStart, 6}, run});
        QVERIFY(!matchTrimmedPrompt(prompt, {{stream, stream}}, m_w, decode, anyState));
        const auto grown = cat({stream, {7, 8, 9}});
        const auto m = matchTrimmedPrompt(grown, {{stream, stream}}, m_w, decode, anyState);
        QVERIFY(m);
        QCOMPARE(m->promptAt, m->boundary); // its own place, not a period off
    }

    // With overlap, the boundaries are where the windows advance.
    void overlappedWindows() {
        const engine::WindowSettings w{16, 4};
        const auto stream = cat({{kStart}, slice(m_story, 0, 200)});
        const auto prompt = cat({{kStart}, slice(m_story, 100, 250)});
        const auto m = matchTrimmedPrompt(prompt, {{stream, stream}}, w, decode, anyState);
        QVERIFY(m);
        QCOMPARE(m->boundary, int64_t(196)); // 16 + 15 * 12
        QCOMPARE(m->promptAt, int64_t(196 - 100));
    }
};

QTEST_GUILESS_MAIN(TestStreamMatch)
#include "tst_stream_match.moc"
