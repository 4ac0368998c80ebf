// Request bodies as the front ends send them, read as the server reads them (torch-free:
// the sanitizer build runs this too). The bodies are those SillyTavern (KoboldAI
// Classic, and Text Completion with the KoboldCpp type) and KoboldAI Lite build, field
// for field, from their source (SillyTavern ba6f7b7: src/endpoints/backends/kobold.js,
// text-completions.js; KoboldCpp 1.76's klite.embd): unknown fields, unrounded slider
// values, -1 and 2^64 seeds and the llama.cpp spellings of the penalty must all work.
#include "client_bodies.h"
#include "test_support.h"

#include "requests.h"

#include <QtTest>

#include <cmath>

using namespace baton::server;

using baton::test::clientBody;

class TestServerRequests : public QObject {
    Q_OBJECT
    ServerOptions m_options;
    std::string m_classic, m_deterministic, m_textCompletion, m_lite;

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        m_classic = clientBody("sillytavern_classic");
        m_deterministic = clientBody("sillytavern_deterministic");
        m_textCompletion = clientBody("sillytavern_text_completion");
        m_lite = clientBody("koboldai_lite");
        QVERIFY(!m_lite.empty() && !m_textCompletion.empty());
    }

    void sillyTavernClassic() {
        const KoboldGenerate g = parseKoboldGenerate(m_classic, m_options);
        const auto& s = g.request.sampling;
        QCOMPARE(g.request.prompt, std::string("User: Hi\nBot:"));
        QCOMPARE(s.maxTokens, 350);
        QCOMPARE(g.request.maxContextTokens, int64_t(8192));
        QCOMPARE(s.repetitionPenalty, 1.1);
        QCOMPARE(s.repetitionRange, 600);
        QCOMPARE(s.topK, 0);
        QCOMPARE(s.topP, 0.95);
        QCOMPARE(s.stopStrings, std::vector<std::string>{"\nUser:"});
        QVERIFY(g.trimStop);
    }

    // A seed beyond 64 bits is a seed all the same: the same one twice, the same text.
    void sillyTavernDeterministic() {
        const KoboldGenerate a = parseKoboldGenerate(m_deterministic, m_options);
        const KoboldGenerate b = parseKoboldGenerate(m_deterministic, m_options);
        QCOMPARE(a.request.sampling.seed, b.request.sampling.seed);
        QCOMPARE(a.request.sampling.temperature, 0.0);
        QCOMPARE(a.request.sampling.topP, 1.0); // 0 is KoboldAI's "off"
        QCOMPARE(a.request.sampling.topK, 1);
        QVERIFY(a.request.sampling.stopStrings.empty());
        // Other large seeds stay apart, and an integer seed is itself.
        std::string other = m_deterministic;
        other.replace(other.find("18446744073709552000"), 20, "36893488147419103232");
        QVERIFY(parseKoboldGenerate(other, m_options).request.sampling.seed !=
                a.request.sampling.seed);
        other = m_deterministic;
        other.replace(other.find("18446744073709552000"), 20, "18446744073709551615");
        QCOMPARE(parseKoboldGenerate(other, m_options).request.sampling.seed,
                 uint64_t(18446744073709551615ull));
        other.replace(other.find("18446744073709551615"), 20, "42");
        QCOMPARE(parseKoboldGenerate(other, m_options).request.sampling.seed, uint64_t(42));
    }

    // -1 asks for a random seed: two requests must not share one (SillyTavern's
    // "regenerate" would write the same text again).
    void negativeSeedIsRandom() {
        const auto a = parseOpenAiCompletion(m_textCompletion, m_options);
        const auto b = parseOpenAiCompletion(m_textCompletion, m_options);
        QVERIFY(a.request.sampling.seed != b.request.sampling.seed);
        const std::string kobold = R"({"prompt":"a","sampler_seed":-1})";
        QVERIFY(parseKoboldGenerate(kobold, m_options).request.sampling.seed !=
                parseKoboldGenerate(kobold, m_options).request.sampling.seed);
    }

    // KoboldCpp's sampler fields under the names its OpenAI clients use: top_k, the
    // largest of the three penalties, the first range given; temperature above OpenAI's
    // 2 and logprobs above its 5, as SillyTavern sends them.
    void sillyTavernTextCompletion() {
        const OpenAiCompletion c = parseOpenAiCompletion(m_textCompletion, m_options);
        const auto& s = c.request.sampling;
        QCOMPARE(c.request.prompt, std::string("Hi"));
        QCOMPARE(s.maxTokens, 350);
        QCOMPARE(s.topK, 40);
        QCOMPARE(s.repetitionPenalty, 1.25);
        QCOMPARE(s.repetitionRange, 0); // the window
        QCOMPARE(s.stopStrings, std::vector<std::string>{"\nUser:"});
        QCOMPARE(c.logprobs, 10);
        QVERIFY(c.stream);
        std::string hot = m_textCompletion;
        hot.replace(hot.find("\"temperature\":0.7"), 17, "\"temperature\":4.5");
        QCOMPARE(parseOpenAiCompletion(hot, m_options).request.sampling.temperature, 4.5);
        // A plain OpenAI request keeps OpenAI's sampling: no top-k, no penalty.
        const auto plain = parseOpenAiCompletion(R"({"prompt":"a"})", m_options);
        QCOMPARE(plain.request.sampling.topK, 0);
        QCOMPARE(plain.request.sampling.repetitionPenalty, 1.0);
    }

    // Lite's unrounded sliders are read as KoboldCpp reads them (int()), memory first.
    void koboldAiLite() {
        const KoboldGenerate g = parseKoboldGenerate(m_lite, m_options);
        const auto& s = g.request.sampling;
        QCOMPARE(g.request.prompt,
                 std::string("[Memory]\n\n### Instruction:\nHello\n### Response:\n"));
        QCOMPARE(s.maxTokens, 200);
        QCOMPARE(g.request.maxContextTokens, int64_t(4096));
        QCOMPARE(s.repetitionRange, 360);
        QCOMPARE(s.repetitionPenalty, 1.07);
        QCOMPARE(g.genkey, std::string("KCPP4821"));
        QCOMPARE(s.stopStrings.size(), size_t(2));
        QCOMPARE(parseGenkey(R"({"genkey":"KCPP4821"})"), std::string("KCPP4821"));
        QCOMPARE(parseGenkey(""), std::string()); // SillyTavern's abort has no body
        QCOMPARE(parseTokenCountPrompt(R"({"prompt":"hello","special":false})"),
                 std::string("hello"));
        // The end-of-text ban: KoboldCpp's field, and vLLM's and llama.cpp's.
        QVERIFY(
            parseKoboldGenerate(R"({"prompt":"a"})", m_options).request.sampling.stopAtEndOfText);
        QVERIFY(!parseKoboldGenerate(R"({"prompt":"a","use_default_badwordsids":true})", m_options)
                     .request.sampling.stopAtEndOfText);
        QVERIFY(!parseOpenAiCompletion(R"({"prompt":"a","ignore_eos":true})", m_options)
                     .request.sampling.stopAtEndOfText);
    }

    // Leniency stops at what is not a value: out of range, not a number, not finite.
    void stillRefused_data() {
        QTest::addColumn<QString>("body");
        QTest::addColumn<bool>("openAi");
        QTest::newRow("max_length over the limit, as a float")
            << R"({"prompt":"a","max_length":2048.5e3})" << false;
        QTest::newRow("max_length below 1") << R"({"prompt":"a","max_length":0.5})" << false;
        QTest::newRow("top_k negative") << R"({"prompt":"a","top_k":-0.5e1})" << false;
        QTest::newRow("seed a string") << R"({"prompt":"a","sampler_seed":"7"})" << false;
        QTest::newRow("penalty below 1") << R"({"prompt":"a","repeat_penalty":0.9})" << true;
        QTest::newRow("penalty over 10") << R"({"prompt":"a","repetition_penalty":11})" << true;
        QTest::newRow("temperature over 10") << R"({"prompt":"a","temperature":10.5})" << true;
        QTest::newRow("logprobs over 20") << R"({"prompt":"a","logprobs":21})" << true;
        QTest::newRow("max_tokens a fraction") << R"({"prompt":"a","max_tokens":1.5})" << true;
    }
    void stillRefused() {
        QFETCH(QString, body);
        QFETCH(bool, openAi);
        const std::string text = body.toStdString();
        try {
            if (openAi)
                parseOpenAiCompletion(text, m_options);
            else
                parseKoboldGenerate(text, m_options);
            QFAIL("accepted");
        } catch (const RequestError& e) {
            QCOMPARE(e.status(), 400);
        }
    }
};

QTEST_GUILESS_MAIN(TestServerRequests)
#include "tst_server_requests.moc"
