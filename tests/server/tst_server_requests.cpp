// Request bodies as the front ends send them, read as the server reads them (torch-free:
// the sanitizer build runs this too). The bodies are those SillyTavern (KoboldAI
// Classic, and Text Completion with the KoboldCpp type) and KoboldAI Lite build, field
// for field, from their source (SillyTavern ba6f7b7: src/endpoints/backends/kobold.js,
// text-completions.js; KoboldCpp 1.76's klite.embd): unknown fields, unrounded slider
// values, -1 and 2^64 seeds and the llama.cpp spellings of the penalty must all work.
#include "client_bodies.h"
#include "test_support.h"

#include "chat_template.h"
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
        const TokenizeRequest count = parseTokenCount(clientBody("koboldai_lite_tokencount"));
        QCOMPARE(count.text, std::string("dragon"));
        QVERIFY(!count.addSpecial);
        QVERIFY(parseTokenCount(R"({"prompt":"a"})").addSpecial); // KoboldCpp's default
        for (const char* body :
             {"koboldai_lite_abort", "koboldai_lite_check", "koboldai_lite_last_logprobs"})
            QCOMPARE(parseGenkey(clientBody(body)), std::string("KCPP4821"));
        // The end-of-text ban: KoboldCpp's field, and vLLM's and llama.cpp's.
        QVERIFY(
            parseKoboldGenerate(R"({"prompt":"a"})", m_options).request.sampling.stopAtEndOfText);
        QVERIFY(!parseKoboldGenerate(R"({"prompt":"a","use_default_badwordsids":true})", m_options)
                     .request.sampling.stopAtEndOfText);
        QVERIFY(!parseOpenAiCompletion(R"({"prompt":"a","ignore_eos":true})", m_options)
                     .request.sampling.stopAtEndOfText);
    }

    // Counts over the server's limits are clamped and the clamp reported, not refused:
    // front ends offer more than a server takes.
    void limitsAreClamped() {
        // By default a request may generate a quarter of the context: what KoboldAI Lite
        // offers (its Max Output goes up to a quarter of true_max_context_length), so
        // Lite's 4,096 is taken as asked (issue 65: clamped to 2,048).
        QCOMPARE(m_options.generateLimit(), int(m_options.maxContextTokens / 4));
        auto asked = parseKoboldGenerate(R"({"prompt":"a","max_length":4096})", m_options).request;
        QCOMPARE(asked.sampling.maxTokens, 4096);
        QVERIFY(asked.adjusted.empty());
        ServerOptions limited = m_options; // --max-length 2048
        limited.maxGenerateTokens = 2048;
        auto g = parseKoboldGenerate(
            R"({"prompt":"a","max_context_length":6144,"max_length":4096.5})", limited);
        QCOMPARE(g.request.sampling.maxTokens, limited.generateLimit());
        QCOMPARE(g.request.maxContextTokens, int64_t(6144));
        QCOMPARE(g.request.adjusted,
                 std::vector<std::string>{"max_length 4096 clamped to 2048, the server's limit"});
        g = parseKoboldGenerate(R"({"prompt":"a","max_context_length":1e7})", limited);
        QCOMPARE(g.request.maxContextTokens, limited.maxContextTokens);
        QCOMPARE(g.request.adjusted.size(), size_t(1));
        auto c = parseOpenAiCompletion(R"({"prompt":"a","max_tokens":100000})", limited);
        QCOMPARE(c.request.sampling.maxTokens, limited.generateLimit());
        QCOMPARE(c.request.adjusted.size(), size_t(1));
        auto l = parseLlamaCompletion(R"({"prompt":"a","n_predict":-1})", limited);
        QCOMPARE(l.request.sampling.maxTokens, limited.generateLimit());
        QVERIFY(l.request.adjusted.empty()); // -1 is "no limit of the client's own"
        l = parseLlamaCompletion(R"({"prompt":"a","n_predict":5000,"n_probs":50})", limited);
        QCOMPARE(l.request.sampling.maxTokens, limited.generateLimit());
        QCOMPARE(l.probs, 20);
        QCOMPARE(l.request.adjusted.size(), size_t(2));
        // Within the limits: nothing said.
        QVERIFY(parseKoboldGenerate(m_lite, m_options).request.adjusted.empty());
    }

    // Every sampler of the settings table by the names clients send; one Baton does
    // not have is reported as not used when it is on.
    void samplersByTheirFieldNames() {
        const OpenAiCompletion st = parseOpenAiCompletion(m_textCompletion, m_options);
        const auto& s = st.request.sampling;
        QCOMPARE(s.temperatureLast, 1); // "temperature_last": true
        QCOMPARE(s.drySequenceBreakers, (std::vector<std::string>{"\n", ":"})); // JSON text
        QCOMPARE(s.xtcThreshold, 0.1);
        QCOMPARE(s.mirostatTau, 5.0);
        QVERIFY(st.request.adjusted.empty());
        const KoboldGenerate k = parseKoboldGenerate(
            R"({"prompt":"a","min_p":0.1,"typical":0.9,"tfs":0.95,"top_a":0.2,"nsigma":1.5,
                "dry_multiplier":0.8,"dry_base":2,"dry_allowed_length":3.7,"dry_penalty_last_n":256,
                "dry_sequence_breakers":["\n","."],"xtc_threshold":0.2,"xtc_probability":0.5,
                "dynatemp_range":0.3,"dynatemp_exponent":1.2,"mirostat":2,"mirostat_tau":4,
                "mirostat_eta":0.2,"presence_penalty":0.4,"frequency_penalty":0.3,
                "logit_bias":{"50256":-100,"13":2.5},"smoothing_factor":0.2})",
            m_options);
        const auto& g = k.request.sampling;
        QCOMPARE(g.minP, 0.1);
        QCOMPARE(g.typicalP, 0.9);
        QCOMPARE(g.tailFree, 0.95);
        QCOMPARE(g.topA, 0.2);
        QCOMPARE(g.topNSigma, 1.5);
        QCOMPARE(g.dryMultiplier, 0.8);
        QCOMPARE(g.dryBase, 2.0);
        QCOMPARE(g.dryAllowedLength, 3);
        QCOMPARE(g.dryRange, 256);
        QCOMPARE(g.drySequenceBreakers, (std::vector<std::string>{"\n", "."}));
        QCOMPARE(g.xtcProbability, 0.5);
        QCOMPARE(g.dynatempRange, 0.3);
        QCOMPARE(g.mirostat, 2);
        QCOMPARE(g.mirostatEta, 0.2);
        QCOMPARE(g.presencePenalty, 0.4);
        QCOMPARE(g.frequencyPenalty, 0.3);
        QCOMPARE(g.logitBias.size(), size_t(2));
        QCOMPARE(k.request.adjusted, std::vector<std::string>{
                                         "smoothing_factor not used (Baton does not have it yet)"});
        // llama.cpp's and OpenAI's spellings.
        const LlamaCompletion l = parseLlamaCompletion(
            R"({"prompt":"a","typical_p":0.8,"tfs_z":0.9,"top_n_sigma":2,"mirostat":2})",
            m_options);
        QCOMPARE(l.request.sampling.typicalP, 0.8);
        QCOMPARE(l.request.sampling.tailFree, 0.9);
        QCOMPARE(l.request.sampling.topNSigma, 2.0);
        QCOMPARE(parseOpenAiCompletion(R"({"prompt":"a","mirostat_mode":2})", m_options)
                     .request.sampling.mirostat,
                 2);
        // llama.cpp's -1 for "off" and "the whole context"; Mirostat 1 is not there.
        const LlamaCompletion off = parseLlamaCompletion(
            R"({"prompt":"a","top_n_sigma":-1,"dry_penalty_last_n":-1,"repeat_last_n":-1,
                "mirostat":1,"top_k":100000000000})",
            m_options);
        QCOMPARE(off.request.sampling.topNSigma, 0.0);
        QCOMPARE(off.request.sampling.dryRange, 0);
        QCOMPARE(off.request.sampling.repetitionRange, 0);
        QCOMPARE(off.request.sampling.mirostat, 0);
        QCOMPARE(off.request.sampling.topK, 1 << 24);
        QCOMPARE(off.request.adjusted,
                 std::vector<std::string>{"mirostat 1 not used (Baton has Mirostat 2 only)"});
        // The sampler order: KoboldAI Lite's default, and llama.cpp's names.
        QCOMPARE(parseKoboldGenerate(R"({"prompt":"a","sampler_order":[6,0,1,3,4,2,5]})", m_options)
                     .request.sampling.samplerOrder,
                 (std::vector<std::string>{"top_k", "top_a", "tail_free", "typical_p", "top_p",
                                           "min_p", "temperature", "top_n_sigma", "xtc"}));
        const LlamaCompletion chain = parseLlamaCompletion(
            R"({"prompt":"a","samplers":["penalties","top_k","typ_p","min_p","mystery","temperature"]})",
            m_options);
        QCOMPARE(chain.request.sampling.samplerOrder,
                 (std::vector<std::string>{"top_k", "typical_p", "min_p", "temperature"}));
        QCOMPARE(chain.request.adjusted, std::vector<std::string>{"sampler mystery not used"});
        // Banned strings: KoboldAI Lite's "banned_tokens" and KoboldCpp's "banned_strings".
        QCOMPARE(parseKoboldGenerate(
                     R"({"prompt":"a","banned_tokens":["shivers down"],"banned_strings":["Mr."]})",
                     m_options)
                     .request.sampling.bannedPhrases,
                 (std::vector<std::string>{"Mr.", "shivers down"}));
        for (const char* bad :
             {R"({"prompt":"a","min_p":1.5})", R"({"prompt":"a","logit_bias":{"007":1}})",
              R"({"prompt":"a","dry_base":"2"})", R"({"prompt":"a","logit_bias":{"x":1}})",
              R"({"prompt":"a","logit_bias":{"3":500}})",
              R"({"prompt":"a","dry_sequence_breakers":[""]})",
              R"({"prompt":"a","sampler_order":[7]})", R"({"prompt":"a","sampler_order":"0,1"})",
              R"({"prompt":"a","banned_tokens":[""]})", R"({"prompt":"a","banned_strings":"x"})"}) {
            try {
                parseKoboldGenerate(bad, m_options);
                QFAIL(bad);
            } catch (const RequestError& e) {
                QCOMPARE(e.status(), 400);
            }
        }
    }

    // mikupad in each of its modes, with its defaults.
    void mikupad() {
        const KoboldGenerate k = parseKoboldGenerate(clientBody("mikupad_koboldcpp"), m_options);
        QVERIFY(k.logprobs); // "logprobs": 10, a number
        QCOMPARE(k.request.sampling.logprobs, 10);
        QCOMPARE(k.request.sampling.maxTokens, 1024);
        QCOMPARE(k.request.sampling.repetitionRange, 256);
        QCOMPARE(parseKoboldGenerate(R"({"prompt":"a","logprobs":true})", m_options)
                     .request.sampling.logprobs,
                 5);
        QVERIFY(!parseKoboldGenerate(R"({"prompt":"a","logprobs":0})", m_options).logprobs);
        QVERIFY(!parseKoboldGenerate(R"({"prompt":"a","logprobs":false})", m_options).logprobs);

        const LlamaCompletion l =
            parseLlamaCompletion(clientBody("mikupad_llamacpp_completion"), m_options);
        QCOMPARE(l.request.prompt, std::string("Once upon a time"));
        QVERIFY(l.stream && l.postSamplingProbs);
        QCOMPARE(l.probs, 10);
        QCOMPARE(l.request.sampling.maxTokens, m_options.generateLimit());
        QCOMPARE(l.request.sampling.topK, 40);
        QCOMPARE(l.request.sampling.repetitionPenalty, 1.1);
        QCOMPARE(l.request.sampling.repetitionRange, 256);
        QCOMPARE(parseLlamaTokenize(clientBody("mikupad_llamacpp_tokenize")).text,
                 std::string("Once upon a time"));
        QCOMPARE(parseTokenIds(clientBody("mikupad_llamacpp_detokenize"), "tokens"),
                 std::vector<int32_t>{9038});
        QCOMPARE(parseTokenCount(clientBody("mikupad_koboldcpp_tokencount")).text,
                 std::string("Once upon a time"));

        const OpenAiCompletion o = parseOpenAiCompletion(clientBody("mikupad_openai"), m_options);
        QCOMPARE(o.logprobs, 10);
        QVERIFY(o.stream && o.request.sampling.stopAtEndOfText);
        QCOMPARE(o.request.sampling.repetitionPenalty, 1.1);
        QCOMPARE(o.request.sampling.maxTokens, 1024);
        QVERIFY(!parseOpenAiCompletion(R"({"prompt":"a","ban_eos_token":true})", m_options)
                     .request.sampling.stopAtEndOfText);
    }

    // A chat becomes a script the model continues as the assistant.
    void chat() {
        const OpenAiChat c = parseOpenAiChat(
            R"({"messages":[{"role":"system","content":"Tell a sea story."},
                            {"role":"user","content":[{"type":"text","text":"Who is "},
                                                      {"type":"text","text":"the captain?"}]},
                            {"role":"user","name":"Emma","content":"And the mate?"}],
                "max_completion_tokens":40,"logprobs":true,"top_logprobs":3,"stream":true})",
            m_options);
        QCOMPARE(c.messages.size(), size_t(3));
        QCOMPARE(c.request.sampling.maxTokens, 40);
        QCOMPARE(c.logprobs, 3);
        QVERIFY(c.stream);
        ChatPrompt p = renderChat(ChatTemplate{}, c.messages);
        QCOMPARE(p.prompt, std::string("System: Tell a sea story.\nUser: Who is the captain?\n"
                                       "Emma: And the mate?\nAssistant:"));
        QCOMPARE(p.stops, (std::vector<std::string>{"\nUser:", "\nSystem:", "\nEmma:"}));
        // A model's own labels.
        const ChatTemplate t = parseChatTemplate(
            R"({"start":"A play.\n\n","labels":{"user":"Reader","assistant":"Baton"}})");
        p = renderChat(t, {{"user", "", "Hello"}});
        QCOMPARE(p.prompt, std::string("A play.\n\nReader: Hello\nBaton:"));
        QCOMPARE(p.stops, std::vector<std::string>{"\nReader:"});
        for (const char* bad : {R"({"labels":{"user":""}})", R"({"separator":""})",
                                R"({"labels":[1]})", R"({"start":5})", "[1]"}) {
            try {
                parseChatTemplate(bad);
                QFAIL(bad);
            } catch (const RequestError& e) {
                QCOMPARE(e.status(), 500);
                QVERIFY(std::string(e.what()).find("chat_template.json") != std::string::npos);
            }
        }
        for (const char* bad :
             {R"({})", R"({"messages":[]})", R"({"messages":[{"content":"a"}]})",
              R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})",
              // A part whose type is not a string (once an exception nobody caught).
              R"({"messages":[{"role":"user","content":[{"type":3,"text":"a"}]}]})",
              R"({"messages":[{"role":"user","content":5}]})"}) {
            try {
                parseOpenAiChat(bad, m_options);
                QFAIL(bad);
            } catch (const RequestError& e) {
                QCOMPARE(e.status(), 400);
            }
        }
    }

    // Leniency stops at what is not a value: out of range, not a number, not finite.
    void stillRefused_data() {
        QTest::addColumn<QString>("body");
        QTest::addColumn<bool>("openAi");
        QTest::newRow("logprobs a string") << R"({"prompt":"a","logprobs":"yes"})" << false;
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
