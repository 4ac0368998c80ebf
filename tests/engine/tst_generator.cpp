// Streaming generation: limits, stop strings, callbacks, cancellation, the
// end-of-text token, seeds, and windows that roll over.
#include "test_support.h"
#include "tiny_model.h"
#include "verify_ok.h"

#include "inference/phrase_bans.h"
#include "model/safetensors.h"

#include <baton/engine/generator.h>
#include <baton/engine/model.h>

#include <QTemporaryDir>
#include <QtTest>

#include <cctype>
#include <cmath>

using namespace baton::engine;

class TestGenerator : public QObject {
    Q_OBJECT
    std::shared_ptr<Model> m_model;
    QTemporaryDir m_tmp;
    const std::string m_prompt = "He was very much pleased with Randalls, and";

    std::unique_ptr<Generator> make(const WindowSettings& w = {}) {
        auto g = Generator::create(m_model, w);
        if (!g.ok())
            return nullptr;
        return std::move(*g);
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        auto model = Model::load(baton::test::fixture());
        BATON_VERIFY_OK(model);
        m_model = *model;
    }

    void maxTokensAndText() {
        auto g = make();
        QVERIFY(g->appendText(m_prompt).ok());
        const int64_t before = g->streamLength();
        SamplingOptions o;
        o.maxTokens = 25;
        o.seed = 3;
        o.stopAtEndOfText = false;
        std::string streamed;
        int events = 0;
        auto r = g->generate(o, [&](const GenerationEvent& e) {
            streamed += e.text;
            ++events;
            return true;
        });
        QVERIFY(r.ok());
        QCOMPARE(r->tokens.size(), size_t(25));
        QCOMPARE(r->reason, StopReason::MaxTokens);
        QCOMPARE(streamed, r->text);
        QVERIFY(events >= 25);
        QCOMPARE(g->streamLength(), before + 25);
        QCOMPARE(r->text, m_model->tokenizer()->decode(r->tokens));
    }

    void sameSeedSameText() {
        SamplingOptions o;
        o.maxTokens = 30;
        o.seed = 99;
        o.temperature = 1.0;
        auto a = make(), b = make(), c = make();
        for (auto* g : {a.get(), b.get(), c.get()})
            QVERIFY(g->appendText(m_prompt).ok());
        const auto ra = a->generate(o);
        const auto rb = b->generate(o);
        o.seed = 100;
        const auto rc = c->generate(o);
        QCOMPARE(ra->tokens, rb->tokens);
        QVERIFY(ra->tokens != rc->tokens);
    }

    // Back to the mark: the same text again from the same seed, with nothing read again;
    // not once the window has rolled over.
    void markAndRewind() {
        auto g = make({64, 0});
        QVERIFY(g);
        QVERIFY(!g->rewind()); // no mark yet
        QVERIFY(g->appendText(m_prompt).ok());
        g->mark();
        const int64_t marked = g->streamLength();
        const std::vector<float> logits = g->nextLogits();
        SamplingOptions o;
        o.maxTokens = 12;
        o.seed = 5;
        o.stopAtEndOfText = false;
        const auto first = g->generate(o);
        QVERIFY(first.ok() && first->rollovers == 0);
        QVERIFY(g->appendText(" and then more").ok());
        QVERIFY(g->rewind());
        QCOMPARE(g->streamLength(), marked);
        QCOMPARE(g->windowFill(), int(marked));
        QCOMPARE(g->nextLogits(), logits);
        const auto again = g->generate(o);
        QVERIFY(again.ok());
        QCOMPARE(again->tokens, first->tokens);

        auto small = make({16, 4});
        QVERIFY(small->appendText(m_prompt).ok());
        small->mark();
        o.maxTokens = 40; // rolls over
        const auto rolled = small->generate(o);
        QVERIFY(rolled.ok() && rolled->rollovers > 0);
        const int64_t length = small->streamLength();
        QVERIFY(!small->rewind());
        QCOMPARE(small->streamLength(), length);
    }

    void stopString() {
        SamplingOptions o;
        o.temperature = 0;
        o.maxTokens = 40;
        auto g = make();
        QVERIFY(g->appendText(m_prompt).ok());
        const auto full = g->generate(o);
        QVERIFY(full.ok() && full->text.size() > 20);
        const std::string stop = full->text.substr(12, 4);
        const std::string expected = full->text.substr(0, full->text.find(stop));
        o.stopStrings = {"never-appears-anywhere", stop};
        auto g2 = make();
        QVERIFY(g2->appendText(m_prompt).ok());
        std::string streamed;
        const auto r = g2->generate(o, [&](const GenerationEvent& e) {
            streamed += e.text;
            return true;
        });
        QVERIFY(r.ok());
        QCOMPARE(r->reason, StopReason::StopString);
        QCOMPARE(r->text, expected);
        QCOMPARE(streamed, expected); // nothing of the stop string ever reached the callback
    }

    // A text's logit bias: -100 on the tokens of what greedy decoding wrote first, and
    // it writes something else; a bad text is refused.
    void textBias() {
        SamplingOptions o;
        o.temperature = 0;
        o.maxTokens = 1;
        auto g = make();
        QVERIFY(g->appendText(m_prompt).ok());
        g->mark();
        const auto first = g->generate(o);
        QVERIFY(first.ok() && first->tokens.size() == 1);
        QVERIFY(g->rewind());
        o.textBias = {{first->text, -100.f}};
        const auto other = g->generate(o);
        QVERIFY(other.ok() && other->tokens.size() == 1);
        QVERIFY(other->tokens[0] != first->tokens[0]);
        o.textBias = {{"", 1.f}};
        QVERIFY(!g->generate(o).ok());
        o.textBias = {{"ok", 101.f}};
        QVERIFY(!g->generate(o).ok());
        o.textBias = {{"\xff", 1.f}}; // not UTF-8
        QVERIFY(!g->generate(o).ok());
    }

    // Banned phrases: greedy decoding writes G; with a phrase of several tokens from G
    // banned (one that spans a window roll-over, in small windows), the text is G up to
    // where the phrase began and never holds the phrase; the stream handed out is the
    // text; the generator's state is the state of the tokens kept (a fresh generator
    // reading them predicts the same next token); the same seed writes the same again.
    void bannedPhrases_data() {
        QTest::addColumn<int>("window");
        QTest::addColumn<bool>("acrossRollover");
        QTest::newRow("one window") << 128 << false;
        QTest::newRow("across a roll-over") << 16 << true;
    }
    void bannedPhrases() {
        QFETCH(int, window);
        QFETCH(bool, acrossRollover);
        SamplingOptions o;
        o.temperature = 1;
        o.maxTokens = 60;
        o.stopAtEndOfText = false;
        const WindowSettings w{window, window / 4};
        // A seed whose text holds four tokens, from two before the first roll-over (or
        // from the tenth token), whose text appears there first.
        std::string phrase;
        GenerationResult plain;
        std::vector<GenerationEvent> events;
        int64_t promptTokens = 0;
        size_t at = std::string::npos;
        for (o.seed = 1; o.seed < 40 && at == std::string::npos; ++o.seed) {
            auto g = make(w);
            QVERIFY(g);
            QVERIFY(g->appendText(m_prompt).ok());
            promptTokens = g->streamLength();
            events.clear();
            auto r = g->generate(o, [&](const GenerationEvent& e) {
                events.push_back(e);
                return true;
            });
            QVERIFY(r.ok() && r->tokens.size() == 60);
            plain = *r;
            size_t first = 10;
            if (acrossRollover) {
                size_t k = 1;
                while (k < events.size() && events[k].windowIndex == events[0].windowIndex)
                    ++k;
                QVERIFY2(k > 2 && k + 2 < events.size(), "no roll-over inside the generation");
                first = k - 2;
            }
            size_t start = 0;
            for (size_t i = 0; i < first; ++i)
                start += events[i].text.size();
            phrase.clear();
            for (size_t i = first; i < first + 4; ++i)
                phrase += events[i].text;
            if (phrase.size() >= 4 && plain.text.find(phrase) == start &&
                events[first].text.size() > 0)
                at = start;
        }
        QVERIFY2(at != std::string::npos, "no seed gave a phrase to ban");
        --o.seed;
        o.bannedPhrases = {phrase};
        o.bannedInsideWords = true; // the phrase is four tokens' text, not whole words
        auto run = [&](std::string& streamed) {
            auto b = make(w);
            if (!b->appendText(m_prompt).ok())
                QTest::qFail("appendText", __FILE__, __LINE__);
            auto r = b->generate(o, [&](const GenerationEvent& e) {
                streamed += e.text;
                return true;
            });
            return std::make_pair(std::move(b), std::move(r));
        };
        std::string streamed;
        auto [b, banned] = run(streamed);
        QVERIFY(banned.ok());
        QCOMPARE(banned->tokens.size(), size_t(60));
        QCOMPARE(streamed, banned->text);
        QVERIFY2(banned->text.find(phrase) == std::string::npos, banned->text.c_str());
        QVERIFY(banned->text != plain.text);
        size_t kept = 0; // the text of the tokens wholly before the phrase
        for (size_t i = 0; i < events.size() && kept + events[i].text.size() <= at; ++i)
            kept += events[i].text.size();
        QCOMPARE(banned->text.substr(0, kept), plain.text.substr(0, kept));
        QCOMPARE(b->streamLength(), promptTokens + 60);
        auto fresh = make(w);
        QVERIFY(fresh->appendText(m_prompt).ok());
        QVERIFY(fresh->append(banned->tokens).ok());
        const auto x = b->nextLogits(), y = fresh->nextLogits();
        QCOMPARE(std::max_element(x.begin(), x.end()) - x.begin(),
                 std::max_element(y.begin(), y.end()) - y.begin());
        std::string again;
        QCOMPARE(run(again).second->tokens, banned->tokens);
    }

    // A phrase is banned as a whole word unless bannedInsideWords: a fragment the plain
    // text holds only inside words changes nothing, and inside words it is banned.
    void bannedPhrasesAreWholeWords() {
        SamplingOptions o;
        o.temperature = 1;
        o.maxTokens = 60;
        o.stopAtEndOfText = false;
        o.seed = 5;
        auto generate = [&] {
            auto g = make();
            if (!g || !g->appendText(m_prompt).ok())
                return std::string("(failed)");
            auto r = g->generate(o);
            return r ? r->text : std::string("(failed)");
        };
        const std::string plain = generate();
        // Two letters from inside a word of the text, never a word of their own there.
        std::string fragment;
        for (size_t i = 1; i + 2 < plain.size() && fragment.empty(); ++i) {
            const std::string f = plain.substr(i, 2);
            if (!std::isalpha(static_cast<unsigned char>(f[0])) ||
                !std::isalpha(static_cast<unsigned char>(f[1])) ||
                !std::isalpha(static_cast<unsigned char>(plain[i - 1])))
                continue;
            if (PhraseBans({f}, false).firstMatch(plain, 0, true) == std::string::npos)
                fragment = f;
        }
        QVERIFY2(!fragment.empty(), plain.c_str());
        o.bannedPhrases = {fragment};
        QCOMPARE(generate(), plain);
        o.bannedInsideWords = true;
        const std::string anywhere = generate();
        QVERIFY(anywhere != plain);
        std::string lower = anywhere;
        for (char& c : lower)
            c = char(std::tolower(static_cast<unsigned char>(c)));
        std::string f = fragment;
        for (char& c : f)
            c = char(std::tolower(static_cast<unsigned char>(c)));
        QVERIFY2(lower.find(f) == std::string::npos, anywhere.c_str());
    }

    void callbackStops() {
        auto g = make();
        QVERIFY(g->appendText(m_prompt).ok());
        SamplingOptions o;
        o.maxTokens = 50;
        int seen = 0;
        const auto r = g->generate(o, [&](const GenerationEvent&) { return ++seen < 5; });
        QVERIFY(r.ok());
        QCOMPARE(r->reason, StopReason::Callback);
        QCOMPARE(r->tokens.size(), size_t(5));
    }

    // Each token is handed out before the model reads it (the first token does not wait
    // for a step of the model), and whatever needs the model's state after it has the
    // model read it first: a state exported inside the callback, and the logits there,
    // are bit for bit those of a twin that stopped after that token. A recurrent model
    // in windows of 16 (o = 4), so the pool is in the state and windows roll over.
    void tokensAreHandedOutBeforeTheModelReadsThem() {
        auto model = baton::test::loadRecurrentFixture(m_tmp.filePath("recurrent"));
        QVERIFY(model);
        const WindowSettings w{16, 4};
        SamplingOptions o;
        o.maxTokens = 24;
        o.seed = 7;
        o.temperature = 1.0;
        o.stopAtEndOfText = false;
        struct Seen {
            int64_t readAtEvent = 0, readAfter = 0, windowIndex = 0;
            std::vector<uint8_t> state;
            std::vector<float> logits;
        };
        std::vector<Seen> seen;
        auto g = Generator::create(model, w);
        BATON_VERIFY_OK(g);
        BATON_VERIFY_OK((*g)->appendText(m_prompt));
        const auto r = (*g)->generate(o, [&](const GenerationEvent& e) {
            Seen s;
            s.readAtEvent = (*g)->tokensRead();
            s.windowIndex = e.windowIndex;
            if (e.streamLength != (*g)->streamLength() || e.windowFill != (*g)->windowFill() ||
                (*g)->windowTokens().back() != e.token)
                return false;                              // the token is not in the stream yet
            const bool logitsFirst = seen.size() % 2 == 0; // each on its own has it read
            if (logitsFirst)
                s.logits = (*g)->nextLogits();
            auto state = (*g)->exportState();
            if (!state.ok())
                return false;
            s.state = std::move(*state);
            if (!logitsFirst)
                s.logits = (*g)->nextLogits();
            s.readAfter = (*g)->tokensRead();
            seen.push_back(std::move(s));
            return true;
        });
        BATON_VERIFY_OK(r);
        QCOMPARE(r->reason, StopReason::MaxTokens);
        QCOMPARE(seen.size(), size_t(o.maxTokens));
        QVERIFY(r->rollovers >= 1);
        for (int k = 1; k <= o.maxTokens; ++k) {
            const Seen& s = seen[size_t(k - 1)];
            QCOMPARE(s.readAfter, s.readAtEvent + 1); // read on demand, once
            if (k > 4 && k % 5 != 0 && k != o.maxTokens &&
                s.windowIndex == seen[size_t(k - 2)].windowIndex)
                continue; // the twins: the first tokens, every fifth, roll-overs, the last
            auto twin = Generator::create(model, w);
            BATON_VERIFY_OK(twin);
            BATON_VERIFY_OK((*twin)->appendText(m_prompt));
            SamplingOptions first = o;
            first.maxTokens = k;
            BATON_VERIFY_OK((*twin)->generate(first));
            const auto state = (*twin)->exportState();
            BATON_VERIFY_OK(state);
            QVERIFY2(*state == s.state, qPrintable(QString("token %1").arg(k)));
            QVERIFY2((*twin)->nextLogits() == s.logits, qPrintable(QString("token %1").arg(k)));
        }
        // Nothing is left unread when generate() returns: it goes on from the last token.
        const auto last = (*g)->exportState();
        BATON_VERIFY_OK(last);
        QVERIFY(*last == seen.back().state);
    }

    void cancel() {
        auto g = make();
        QVERIFY(g->appendText(m_prompt).ok());
        CancelToken token;
        SamplingOptions o;
        o.maxTokens = 50;
        int seen = 0;
        const auto r = g->generate(
            o,
            [&](const GenerationEvent&) {
                if (++seen == 3)
                    token.cancel();
                return true;
            },
            token);
        QVERIFY(r.ok());
        QCOMPARE(r->reason, StopReason::Cancelled);
        QCOMPARE(r->tokens.size(), size_t(3));
        // The generator stays usable: the next call continues the stream.
        token.reset();
        const auto more = g->generate(o, {}, token);
        QVERIFY(more.ok());
        QCOMPARE(more->tokens.size(), size_t(50));
    }

    void emptyStreamStartsFromStartToken() {
        auto g = make();
        SamplingOptions o;
        o.maxTokens = 5;
        const auto r = g->generate(o);
        QVERIFY(r.ok());
        QCOMPARE(g->streamLength(), int64_t(6));
        QCOMPARE(g->windowTokens().front(), int32_t(50256));
    }

    // A prompt begins with the model's start-of-text token (as the server, the story
    // service, the Compare page and baton-cli generate send it); a prompt read after
    // another does not get a second one; generateFrom is the same as doing it by hand.
    void aPromptStartsWithStartOfText() {
        const auto ids = m_model->tokenizer()->encode(m_prompt);
        auto g = make();
        BATON_VERIFY_OK(g->appendPrompt(m_prompt));
        QCOMPARE(g->streamLength(), int64_t(ids.size()) + 1);
        QCOMPARE(g->windowTokens().front(), int32_t(50256));
        BATON_VERIFY_OK(g->appendPrompt(" Again."));
        QCOMPARE(g->streamLength(),
                 int64_t(ids.size()) + 1 + int64_t(m_model->tokenizer()->encode(" Again.").size()));
        auto plain = make();
        BATON_VERIFY_OK(plain->appendText(m_prompt));
        QCOMPARE(plain->streamLength(), int64_t(ids.size()));

        GenerateRequest r;
        r.prompt = m_prompt;
        r.sampling.maxTokens = 12;
        r.sampling.seed = 11;
        r.sampling.stopAtEndOfText = false;
        std::string streamed;
        auto viaRequest = generateFrom(m_model, r, [&](const GenerationEvent& e) {
            streamed += e.text;
            return true;
        });
        BATON_VERIFY_OK(viaRequest);
        QCOMPARE(streamed, viaRequest->text);
        auto byHand = make();
        BATON_VERIFY_OK(byHand->appendPrompt(m_prompt));
        auto expected = byHand->generate(r.sampling);
        BATON_VERIFY_OK(expected);
        QCOMPARE(viaRequest->tokens, expected->tokens);
        // Bad windows are refused before anything runs.
        r.windows = {16, 16};
        QVERIFY(!generateFrom(m_model, r, {}).ok());
    }

    void outOfRangeIdsAreRefused() {
        auto g = make();
        auto r = g->append({1, 2, 60000});
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::InvalidArgument);
        QCOMPARE(g->streamLength(), int64_t(0));
    }

    void badWindowsAreRefused() {
        QVERIFY(!Generator::create(m_model, {200, 0}).ok()); // beyond 128 positions
        QVERIFY(!Generator::create(m_model, {16, 16}).ok()); // overlap must be < T
        QVERIFY(!Generator::create(m_model, {16, -1}).ok());
    }

    // A model whose final layer always points at the end-of-text token.
    void endOfText() {
        const QString dir = m_tmp.filePath("eos-model");
        QDir().mkpath(dir);
        ModelConfig c;
        c.nLayer = 1;
        c.nHead = 2;
        c.nEmbd = 16;
        c.nInner = 32;
        c.nPositions = 32;
        c.vocabSize = 50257;
        c.eosTokenId = c.bosTokenId = 50256;
        QVERIFY(baton::test::writeTinyGpt2(dir.toStdString(), c));
        for (const char* f : {"vocab.json", "merges.txt"})
            QVERIFY(QFile::copy(QString::fromStdString(baton::test::gpt2TokenizerDir()) + "/" + f,
                                dir + "/" + f));
        // ln_f with zero gain and bias b makes every final hidden state b; put 20 b in
        // the end-of-text row of the tied embedding.
        {
            const std::string st = (dir + "/model.safetensors").toStdString();
            auto f = openSafetensors(st);
            QVERIFY(f.ok());
            std::vector<std::vector<char>> bytes;
            std::vector<StWriteTensor> out;
            for (const auto& t : f->tensors()) {
                bytes.emplace_back(t.bytes());
                QVERIFY(f->read(t, bytes.back().data()).ok());
            }
            std::vector<float> b(16);
            for (int i = 0; i < 16; ++i)
                b[size_t(i)] = (i % 2 ? 1.f : -1.f);
            for (size_t i = 0; i < f->tensors().size(); ++i) {
                const auto& t = f->tensors()[i];
                auto* data = reinterpret_cast<float*>(bytes[i].data());
                if (t.name == "ln_f.weight")
                    std::fill(data, data + 16, 0.f);
                if (t.name == "ln_f.bias")
                    std::copy(b.begin(), b.end(), data);
                if (t.name == "wte.weight")
                    for (int j = 0; j < 16; ++j)
                        data[50256 * 16 + j] = 20.f * b[size_t(j)];
                out.push_back({t.name, t.dtype, t.shape, bytes[i].data(), bytes[i].size()});
            }
            f = Result<SafetensorsFile>(makeError(ErrorCode::Internal, "closed"));
            QVERIFY(writeSafetensors(st, out).ok());
        }
        auto model = Model::load(dir.toStdString());
        BATON_VERIFY_OK(model);
        auto g = Generator::create(*model, {});
        QVERIFY((*g)->appendText("Once upon a time").ok());
        SamplingOptions o;
        o.temperature = 0.7;
        o.maxTokens = 10;
        const auto stopped = (*g)->generate(o);
        QVERIFY(stopped.ok());
        QCOMPARE(stopped->reason, StopReason::EndOfText);
        QCOMPARE(stopped->tokens.size(), size_t(0));
        o.stopAtEndOfText = false; // suppress it instead
        const auto goesOn = (*g)->generate(o);
        QVERIFY(goesOn.ok());
        QCOMPARE(goesOn->tokens.size(), size_t(10));
        for (auto t : goesOn->tokens)
            QVERIFY(t != 50256);
    }

    // After every roll-over the next-token logits are those of the open window
    // computed from scratch: the overlap tokens were re-encoded at positions 0..o-1.
    void windowsRollOver_data() {
        QTest::addColumn<int>("window");
        QTest::addColumn<int>("overlap");
        QTest::newRow("16:0") << 16 << 0;
        QTest::newRow("16:4") << 16 << 4;
        QTest::newRow("16:15") << 16 << 15;
        QTest::newRow("5:2") << 5 << 2;
    }
    void windowsRollOver() {
        QFETCH(int, window);
        QFETCH(int, overlap);
        auto g = make({window, overlap});
        QVERIFY(g);
        QVERIFY(g->appendText(m_prompt).ok()); // longer than some windows: rolls over while reading
        SamplingOptions o;
        o.maxTokens = 1;
        o.seed = 5;
        o.stopAtEndOfText = false;
        const size_t V = size_t(m_model->config().vocabSize);
        int64_t rollovers = 0;
        for (int step = 0; step < 3 * window; ++step) {
            QCOMPARE(g->windowStart() + g->windowFill(), g->streamLength());
            QCOMPARE(g->windowStart() % (window - overlap), int64_t(0));
            const auto& tokens = g->windowTokens();
            auto full = m_model->windowLogits(tokens);
            QVERIFY(full.ok());
            double worst = 0;
            for (size_t i = 0; i < V; ++i)
                worst = std::max(worst, double(std::abs(g->nextLogits()[i] -
                                                        (*full)[(tokens.size() - 1) * V + i])));
            QVERIFY2(worst < 1e-4, qPrintable(QString("step %1: %2").arg(step).arg(worst)));
            const auto r = g->generate(o);
            QVERIFY(r.ok());
            rollovers += r->rollovers;
        }
        QVERIFY(rollovers >= 2);
    }

    // Pinned tokens (a story's memory in every window) start every window: after each
    // step the generator's logits are those of one fresh window holding the pinned
    // tokens and then the open window's stream tokens.
    void pinnedTokensStartEveryWindow_data() {
        QTest::addColumn<int>("window");
        QTest::addColumn<int>("overlap");
        QTest::addColumn<int>("pinned");
        QTest::newRow("16:0, 3 pinned") << 16 << 0 << 3;
        QTest::newRow("16:4, 5 pinned") << 16 << 4 << 5;
        QTest::newRow("5:2, 2 pinned") << 5 << 2 << 2;
    }
    void pinnedTokensStartEveryWindow() {
        QFETCH(int, window);
        QFETCH(int, overlap);
        QFETCH(int, pinned);
        auto g = make({window, overlap});
        QVERIFY(g);
        const std::vector<int32_t> memory = {464, 3290, 318, 257, 1310};
        const std::vector<int32_t> pin(memory.begin(), memory.begin() + pinned);
        BATON_VERIFY_OK(g->pin(pin));
        QCOMPARE(g->pinnedTokens(), pin);
        QCOMPARE(g->windowFill(), pinned);
        QVERIFY(g->appendText(m_prompt).ok());
        SamplingOptions o;
        o.maxTokens = 1;
        o.seed = 5;
        o.stopAtEndOfText = false;
        const size_t V = size_t(m_model->config().vocabSize);
        const int stride = window - overlap - pinned;
        int64_t rollovers = 0;
        for (int step = 0; step < 3 * window; ++step) {
            QCOMPARE(g->windowStart() + g->windowFill() - pinned, g->streamLength());
            QCOMPARE(g->windowStart(), g->windowIndex() * stride);
            std::vector<int32_t> fed = pin;
            fed.insert(fed.end(), g->windowTokens().begin(), g->windowTokens().end());
            QVERIFY(int(fed.size()) <= window);
            auto full = m_model->windowLogits(fed);
            QVERIFY(full.ok());
            double worst = 0;
            for (size_t i = 0; i < V; ++i)
                worst = std::max(worst, double(std::abs(g->nextLogits()[i] -
                                                        (*full)[(fed.size() - 1) * V + i])));
            QVERIFY2(worst < 1e-4, qPrintable(QString("step %1: %2").arg(step).arg(worst)));
            const auto r = g->generate(o);
            QVERIFY(r.ok());
            rollovers += r->rollovers;
        }
        QVERIFY(rollovers >= 2);
        QCOMPARE(g->windowIndex(), rollovers + (g->windowIndex() - rollovers));
    }

    void pinningIsChecked() {
        auto g = make({16, 4});
        QVERIFY(g);
        // No room left for new text beside the overlap.
        QCOMPARE(g->pin(std::vector<int32_t>(12, 464)).error().code, ErrorCode::InvalidArgument);
        QCOMPARE(g->pin({-1}).error().code, ErrorCode::InvalidArgument);
        QCOMPARE(g->pin({m_model->config().vocabSize}).error().code, ErrorCode::InvalidArgument);
        BATON_VERIFY_OK(g->pin(std::vector<int32_t>(11, 464)));
        QVERIFY(g->appendText("more").ok());
        QCOMPARE(g->pin({464}).error().code, ErrorCode::InvalidArgument); // after reading
        // With only pinned tokens, generation starts right after them.
        auto h = make({16, 4});
        BATON_VERIFY_OK(h->pin({464, 3290}));
        SamplingOptions o;
        o.maxTokens = 3;
        o.temperature = 0;
        o.stopAtEndOfText = false;
        auto r = h->generate(o);
        BATON_VERIFY_OK(r);
        QCOMPARE(h->streamLength(), int64_t(3));
        QCOMPARE(h->windowTokens(), r->tokens);
    }

    // Guidance (a story's note and world info) sits whole just before the continuation
    // in every window: after each step the logits are those of one fresh window holding
    // the pinned tokens, the stream before the guidance, the guidance, then the rest.
    void guidanceSitsWholeBeforeTheContinuation_data() {
        QTest::addColumn<int>("window");
        QTest::addColumn<int>("overlap");
        QTest::addColumn<int>("pinned");
        QTest::addColumn<int>("guide");
        QTest::addColumn<int>("beforeLast");
        QTest::newRow("16:0, 4 guide") << 16 << 0 << 0 << 4 << 0;
        QTest::newRow("16:4, 3 pinned, 5 guide") << 16 << 4 << 3 << 5 << 0;
        QTest::newRow("16:2, 2 pinned, 6 guide, 3 after") << 16 << 2 << 2 << 6 << 3;
        QTest::newRow("12:0, 7 guide, 9 after") << 12 << 0 << 0 << 7 << 9;
    }
    void guidanceSitsWholeBeforeTheContinuation() {
        QFETCH(int, window);
        QFETCH(int, overlap);
        QFETCH(int, pinned);
        QFETCH(int, guide);
        QFETCH(int, beforeLast);
        auto g = make({window, overlap});
        QVERIFY(g);
        const std::vector<int32_t> memory = {464, 3290, 318};
        const std::vector<int32_t> pin(memory.begin(), memory.begin() + pinned);
        if (pinned > 0)
            BATON_VERIFY_OK(g->pin(pin));
        QVERIFY(g->appendText(m_prompt).ok());
        const std::vector<int32_t> ids = {58, 13838, 338, 3465, 25, 1375, 318, 8788};
        const std::vector<int32_t> note(ids.begin(), ids.begin() + guide);
        const int64_t rolledBefore = g->windowIndex();
        BATON_VERIFY_OK(g->setGuide(note, beforeLast));
        QCOMPARE(g->guideTokens(), note);
        const size_t V = size_t(m_model->config().vocabSize);
        auto check = [&](int step) {
            const auto& tokens = g->windowTokens();
            const int64_t at = g->guidePosition();
            QVERIFY2(at >= 0 && at <= int64_t(tokens.size()), qPrintable(QString::number(step)));
            QCOMPARE(g->windowFill(), pinned + int(tokens.size()) + guide);
            std::vector<int32_t> fed = pin;
            fed.insert(fed.end(), tokens.begin(), tokens.begin() + at);
            fed.insert(fed.end(), note.begin(), note.end());
            fed.insert(fed.end(), tokens.begin() + at, tokens.end());
            QVERIFY(int(fed.size()) <= window);
            auto full = m_model->windowLogits(fed);
            QVERIFY(full.ok());
            double worst = 0;
            for (size_t i = 0; i < V; ++i)
                worst = std::max(worst, double(std::abs(g->nextLogits()[i] -
                                                        (*full)[(fed.size() - 1) * V + i])));
            QVERIFY2(worst < 1e-4, qPrintable(QString("step %1: %2").arg(step).arg(worst)));
            QCOMPARE(g->windowStart() + int64_t(tokens.size()), g->streamLength());
        };
        check(-1);
        if (g->windowIndex() == rolledBefore) // it fitted: the tokens after it are the last ones
            QCOMPARE(int64_t(g->windowTokens().size()) - g->guidePosition(), int64_t(beforeLast));
        SamplingOptions o;
        o.maxTokens = 1;
        o.seed = 5;
        o.stopAtEndOfText = false;
        int64_t rollovers = 0;
        for (int step = 0; step < 3 * window; ++step) {
            const auto r = g->generate(o);
            QVERIFY(r.ok());
            rollovers += r->rollovers;
            check(step);
            if (r->rollovers > 0) // a new window: the guidance right after the overlap
                QCOMPARE(g->guidePosition(), int64_t(overlap));
        }
        QVERIFY(rollovers >= 2);
    }

    // Placing guidance again (a new note, or more text read since) moves it: the window
    // is cut back to before the old one and read again, the old one gone.
    void guidanceMoves() {
        auto g = make({32, 0});
        QVERIFY(g);
        BATON_VERIFY_OK(g->appendText("It was a dark and stormy night."));
        BATON_VERIFY_OK(g->setGuide({58, 13838, 60}));
        BATON_VERIFY_OK(g->appendText(" She"));
        const int64_t read = g->tokensRead();
        BATON_VERIFY_OK(g->setGuide({58, 3465, 60}, 1));
        QCOMPARE(g->guidePosition(), int64_t(g->windowTokens().size()) - 1);
        // Cut back to before the old guide: read again are " She" and the new guide.
        QCOMPARE(g->tokensRead() - read, int64_t(1 + 3));
        std::vector<int32_t> fed = g->windowTokens();
        fed.insert(fed.end() - 1, {58, 3465, 60});
        auto full = m_model->windowLogits(fed);
        QVERIFY(full.ok());
        const size_t V = size_t(m_model->config().vocabSize);
        for (size_t i = 0; i < V; i += 97)
            QVERIFY(std::abs(g->nextLogits()[i] - (*full)[(fed.size() - 1) * V + i]) < 1e-4);
        // Taken away: the window is what it would be without it.
        BATON_VERIFY_OK(g->setGuide({}));
        QCOMPARE(g->guidePosition(), int64_t(-1));
        QCOMPARE(g->windowFill(), int(g->windowTokens().size()));
        auto plain = m_model->windowLogits(g->windowTokens());
        QVERIFY(plain.ok());
        for (size_t i = 0; i < V; i += 97)
            QVERIFY(std::abs(g->nextLogits()[i] -
                             (*plain)[(g->windowTokens().size() - 1) * V + i]) < 1e-4);
    }

    // Guidance that leaves no room, or ids outside the vocabulary, are refused; an
    // exported state holds the stream, not the guidance.
    void guidanceIsCheckedAndNotExported() {
        auto g = make({16, 4});
        QVERIFY(g);
        BATON_VERIFY_OK(g->pin({464, 3290}));
        QCOMPARE(g->setGuide(std::vector<int32_t>(10, 464)).error().code,
                 ErrorCode::InvalidArgument);
        QCOMPARE(g->setGuide({-1}).error().code, ErrorCode::InvalidArgument);
        BATON_VERIFY_OK(g->appendText("Once upon a time"));
        BATON_VERIFY_OK(g->setGuide(std::vector<int32_t>(9, 464)));
        const auto blob = g->exportState();
        BATON_VERIFY_OK(blob);
        auto back = Generator::importState(m_model, *blob, {16, 4}, {}, {464, 3290});
        BATON_VERIFY_OK(back);
        QCOMPARE((*back)->windowTokens(), g->windowTokens());
        QCOMPARE((*back)->guidePosition(), int64_t(-1));
        QCOMPARE((*back)->streamLength(), g->streamLength());
    }
};

QTEST_GUILESS_MAIN(TestGenerator)
#include "tst_generator.moc"
