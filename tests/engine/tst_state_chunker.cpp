// StateChunker on its own: the chunks of a generation join to its text, each chunk's
// state resumes exactly where its text ends, and a chunk never ends inside a UTF-8
// character or before text a stop string holds back; what is left at the end comes
// with a state only when the state matches it.
#include "test_support.h"
#include "tiny_model.h"
#include "verify_ok.h"

#include <baton/engine/generator.h>
#include <baton/engine/model.h>
#include <baton/engine/state_chunker.h>

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace baton::engine;

class TestStateChunker : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::shared_ptr<Model> m_recurrent;
    std::unique_ptr<Generator> m_gen; // the recurrent model after a short prompt
    const WindowSettings m_windows{16, 4};

    // The id of the single-byte token for `byte`.
    int32_t byteToken(unsigned char byte) const {
        const auto tok = m_recurrent->tokenizer();
        for (int32_t id = 0; id < tok->vocabSize(); ++id)
            if (tok->tokenBytes(id) == std::string(1, char(byte)))
                return id;
        return -1;
    }
    GenerationEvent event(int32_t token, std::string text) const {
        GenerationEvent e;
        e.token = token;
        e.text = std::move(text);
        return e;
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        QVERIFY(m_tmp.isValid());
        RecurrenceConfig rec;
        rec.window = 16;
        rec.overlap = 4;
        const QString dir = m_tmp.filePath("recurrent");
        QVERIFY2(baton::test::writeRecurrentFixture(dir, rec),
                 qPrintable(baton::test::missingMessage(baton::test::fixtureDir())));
        auto model = Model::load(dir.toStdString());
        BATON_VERIFY_OK(model);
        m_recurrent = *model;
    }

    void init() {
        auto g = Generator::create(m_recurrent, m_windows);
        BATON_VERIFY_OK(g);
        m_gen = std::move(*g);
        QVERIFY(m_gen->appendText("The harbour was quiet that night.").ok());
    }

    void chunksJoinToTheTextAndEachStateResumesWhereItsTextEnds() {
        StateChunker chunker(*m_gen, m_recurrent->tokenizer(), 7);
        std::vector<StateChunk> chunks;
        SamplingOptions o;
        o.maxTokens = 60; // several windows of 16 with an overlap of 4
        o.seed = 11;
        o.stopAtEndOfText = false;
        o.logprobs = 3;
        const int64_t start = m_gen->streamLength();
        std::vector<GenerationEvent> events;
        auto r = m_gen->generate(o, [&](const GenerationEvent& e) {
            events.push_back(e);
            if (auto c = chunker.onEvent(e))
                chunks.push_back(std::move(*c));
            return true;
        });
        BATON_VERIFY_OK(r);
        if (auto rest = chunker.finish())
            chunks.push_back(std::move(*rest));
        QVERIFY(chunks.size() >= 5);

        std::string joined;
        int64_t previous = start, window = 0;
        for (const auto& c : chunks) {
            joined += c.text;
            QVERIFY(c.streamLength > previous);
            QVERIFY(c.streamLength - previous >= 7 || &c == &chunks.back());
            QVERIFY(c.windowIndex >= window);
            previous = c.streamLength;
            window = c.windowIndex;
        }
        QCOMPARE(joined, r->text);
        // Each chunk's tokens: the generation's, in order, with what the model gave them,
        // their texts joining to the chunk's.
        size_t next = 0;
        for (const auto& c : chunks) {
            std::string text;
            for (const ChunkToken& t : c.tokens) {
                QVERIFY(next < events.size());
                const GenerationEvent& e = events[next++];
                QCOMPARE(t.id, e.token);
                QCOMPARE(t.logprob, e.logprob);
                QCOMPARE(t.top, e.topLogprobs);
                QCOMPARE(t.top.size(), size_t(3));
                text += t.text;
            }
            QCOMPARE(text, c.text);
        }
        QCOMPARE(next, events.size());
        QCOMPARE(chunks.back().streamLength, m_gen->streamLength());
        // The open window's index: its start over the stride T - o = 12.
        QCOMPARE(chunks.back().windowIndex, m_gen->windowStart() / 12);
        QVERIFY(chunks.back().windowIndex >= 4);

        // Each chunk's state, imported, plus the tokens generated after it, ends where the
        // uninterrupted generation ended: the same next-token logits.
        const std::vector<float> expected = m_gen->nextLogits();
        for (const auto& c : chunks) {
            QVERIFY(!c.state.empty());
            auto resumed = Generator::importState(m_recurrent, c.state, m_windows);
            BATON_VERIFY_OK(resumed);
            QCOMPARE((*resumed)->streamLength(), c.streamLength);
            const auto first = r->tokens.begin() + (c.streamLength - start);
            BATON_VERIFY_OK((*resumed)->append(std::vector<int32_t>(first, r->tokens.end())));
            const std::vector<float>& got = (*resumed)->nextLogits();
            QCOMPARE(got.size(), expected.size());
            double worst = 0;
            for (size_t i = 0; i < got.size(); ++i)
                worst = std::max(worst, double(std::fabs(got[i] - expected[i])));
            QVERIFY2(worst < 1e-3, qPrintable(QString("logits differ by %1").arg(worst)));
        }
    }

    void neverEndsInsideACharacter() {
        // "é" is two byte tokens (C3 A9): no chunk after the first, whatever the size.
        const int32_t c3 = byteToken(0xC3), a9 = byteToken(0xA9);
        QVERIFY(c3 >= 0 && a9 >= 0);
        StateChunker chunker(*m_gen, m_recurrent->tokenizer(), 1);
        QVERIFY(!chunker.onEvent(event(c3, "")));
        auto c = chunker.onEvent(event(a9, "\xC3\xA9"));
        QVERIFY(c);
        QCOMPARE(c->text, std::string("\xC3\xA9"));
        // The token that completes the character carries all of it.
        QCOMPARE(c->tokens.size(), size_t(2));
        QCOMPARE(c->tokens[0].text, std::string());
        QCOMPARE(c->tokens[1].text, std::string("\xC3\xA9"));
        QVERIFY(!c->state.empty());
        QVERIFY(!chunker.finish()); // nothing left
    }

    void waitsForTextAStopStringHoldsBack() {
        // The generator streams " stop" only once the next token shows it is not the
        // stop string " stops": the text lags the tokens, so no chunk ends between.
        const auto tok = m_recurrent->tokenizer();
        const auto held = tok->encode(" stop");
        const auto next = tok->encode(" now");
        QCOMPARE(held.size(), size_t(1));
        QCOMPARE(next.size(), size_t(1));
        StateChunker chunker(*m_gen, tok, 1);
        QVERIFY(!chunker.onEvent(event(held[0], "")));
        auto c = chunker.onEvent(event(next[0], " stop now"));
        QVERIFY(c);
        QCOMPARE(c->text, std::string(" stop now"));
        // Each token's own text, though the stream handed " stop" out late.
        QCOMPARE(c->tokens.size(), size_t(2));
        QCOMPARE(c->tokens[0].text, std::string(" stop"));
        QCOMPARE(c->tokens[1].text, std::string(" now"));
        QVERIFY(!c->state.empty());
    }

    void chunksHoldAtLeastTheAskedTokens() {
        const auto tok = m_recurrent->tokenizer();
        const auto ids = tok->encode(" one two three four five six seven");
        QCOMPARE(ids.size(), size_t(7));
        StateChunker chunker(*m_gen, tok, 3);
        std::vector<std::string> texts;
        for (int32_t id : ids)
            if (auto c = chunker.onEvent(event(id, tok->tokenBytes(id))))
                texts.push_back(c->text);
        QCOMPARE(texts, (std::vector<std::string>{" one two three", " four five six"}));
        auto rest = chunker.finish();
        QVERIFY(rest);
        QCOMPARE(rest->text, std::string(" seven"));
        QVERIFY(!rest->state.empty()); // consistent: its state matches
    }

    void theRestOfAnEndedStreamHasAStateOnlyWhenItMatches() {
        // The stream ended inside a character: the generator flushes U+FFFD as trailing
        // text (token -1); no state matches that text.
        StateChunker chunker(*m_gen, m_recurrent->tokenizer(), 100);
        QVERIFY(!chunker.onEvent(event(byteToken(0xC3), "")));
        QVERIFY(!chunker.onEvent(event(-1, "\xEF\xBF\xBD")));
        auto rest = chunker.finish();
        QVERIFY(rest);
        QCOMPARE(rest->text, std::string("\xEF\xBF\xBD"));
        QVERIFY(rest->state.empty());
        QVERIFY(!chunker.finish());
    }
};

QTEST_MAIN(TestStateChunker)
#include "tst_state_chunker.moc"
