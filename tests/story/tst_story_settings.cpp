// The story settings codec (story/settings.h): round trips, defaults, and every
// way a stored settings JSON can be wrong.
#include <baton/story/settings.h>

#include <QtTest>

using namespace baton::story;

class TestStorySettings : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void emptyIsTheDefault() {
        for (const char* json : {"", "{}", "  \n"}) {
            auto s = parseSettings(json);
            QVERIFY2(s.ok(), json);
            QCOMPARE(s->sampling.temperature, 0.8);
            QCOMPARE(s->sampling.topP, 0.95);
            QCOMPARE(s->sampling.repetitionPenalty, 1.1);
            QCOMPARE(s->sampling.maxTokens, 200);
            QVERIFY(!s->fixedSeed);
            QVERIFY(s->sampling.stopAtEndOfText);
            QCOMPARE(s->windows.window, 0);
        }
        // The default is the Balanced preset.
        const Preset& balanced = presets()[kBalancedPreset];
        QCOMPARE(QString(balanced.name), QString("Balanced"));
        QVERIFY(matchesPreset(balanced, defaultSettings().sampling));
        // A preset sets every sampler: what it names, and the rest back to off.
        baton::engine::SamplingOptions o;
        o.xtcProbability = 0.5;
        const Preset& minPDry = presets().back();
        QCOMPARE(QString(minPDry.name), QString("Min-p + DRY"));
        applyPreset(minPDry, o);
        QCOMPARE(o.minP, 0.1);
        QCOMPARE(o.dryMultiplier, 0.8);
        QCOMPARE(o.temperature, 1.0);
        QCOMPARE(o.topP, 1.0);
        QCOMPARE(o.repetitionPenalty, 1.0);
        QCOMPARE(o.xtcProbability, 0.0);
        QVERIFY(matchesPreset(minPDry, o) && !matchesPreset(balanced, o));
    }

    void roundTrip() {
        StorySettings s = defaultSettings();
        s.sampling.temperature = 0.5;
        s.sampling.topK = 40;
        s.sampling.topP = 0.9;
        s.sampling.repetitionPenalty = 1.15;
        s.sampling.maxTokens = 77;
        s.sampling.seed = 123456789012345;
        s.fixedSeed = true;
        s.sampling.stopStrings = {"\n>", "THE END"};
        s.sampling.stopAtEndOfText = false;
        s.windows = {64, 8};
        s.memory = MemoryLayout::Once;
        s.loreBudget = 48;
        auto back = parseSettings(settingsJson(s));
        QVERIFY(back.ok());
        QCOMPARE(back->sampling.temperature, 0.5);
        QCOMPARE(back->sampling.topK, 40);
        QCOMPARE(back->sampling.topP, 0.9);
        QCOMPARE(back->sampling.repetitionPenalty, 1.15);
        QCOMPARE(back->sampling.maxTokens, 77);
        QCOMPARE(back->sampling.seed, uint64_t(123456789012345));
        QVERIFY(back->fixedSeed);
        QCOMPARE(back->sampling.stopStrings, s.sampling.stopStrings);
        QVERIFY(!back->sampling.stopAtEndOfText);
        QCOMPARE(back->windows.window, 64);
        QCOMPARE(back->windows.overlap, 8);
        QCOMPARE(back->memory, MemoryLayout::Once);
        QCOMPARE(back->loreBudget, 48);
        QCOMPARE(settingsJson(*back), settingsJson(s));
        // Without a fixed seed no seed is written; the model's windows are not written.
        s.fixedSeed = false;
        s.windows = {};
        s.memory = MemoryLayout::EveryWindow; // the defaults are not written either
        s.loreBudget = 0;
        const std::string json = settingsJson(s);
        QVERIFY(json.find("memory") == std::string::npos);
        QVERIFY(json.find("lore_budget") == std::string::npos);
        QCOMPARE(parseSettings(json)->memory, MemoryLayout::EveryWindow);
        QCOMPARE(parseSettings(R"({"memory": "every_window"})")->memory, MemoryLayout::EveryWindow);
        QVERIFY(json.find("seed") == std::string::npos);
        QVERIFY(json.find("window") == std::string::npos);
        QVERIFY(!parseSettings(json)->fixedSeed);
    }

    void theAppsOldSettingsStillRead() {
        // What the app wrote before the codec existed.
        auto s = parseSettings(R"({"temperature":1.05,"top_k":0,"top_p":0.98,)"
                               R"("repetition_penalty":1.05,"max_tokens":100000,"seed":4,)"
                               R"("window":128,"overlap":0})");
        QVERIFY(s.ok());
        QCOMPARE(s->sampling.maxTokens, 100000);
        QCOMPARE(s->sampling.seed, uint64_t(4));
        QCOMPARE(s->windows.window, 128);
        // Unknown keys (a newer build's) are ignored.
        QVERIFY(parseSettings(R"({"mirostat": 2, "temperature": 0.3})").ok());
    }

    // Every sampler of the settings table round-trips; those left off are not written.
    void everySamplerRoundTrips() {
        StorySettings s = defaultSettings();
        s.sampling.minP = 0.1;
        s.sampling.dryMultiplier = 0.8;
        s.sampling.dryAllowedLength = 3;
        s.sampling.mirostat = 2;
        s.sampling.temperatureLast = 1;
        s.sampling.repetitionRange = 256;
        s.sampling.drySequenceBreakers = {"\n", "."};
        s.sampling.samplerOrder = {"top_k", "min_p", "temperature"};
        s.sampling.textBias = {{" Darcy", -4.5f}, {"\"=", 2.f}};
        s.sampling.bannedPhrases = {"shivers down her spine"};
        const std::string json = settingsJson(s);
        QVERIFY(json.find("xtc_probability") == std::string::npos);
        auto back = parseSettings(json);
        QVERIFY(back.ok());
        QCOMPARE(back->sampling.minP, 0.1);
        QCOMPARE(back->sampling.dryMultiplier, 0.8);
        QCOMPARE(back->sampling.dryAllowedLength, 3);
        QCOMPARE(back->sampling.mirostat, 2);
        QCOMPARE(back->sampling.temperatureLast, 1);
        QCOMPARE(back->sampling.repetitionRange, 256);
        QCOMPARE(back->sampling.drySequenceBreakers, s.sampling.drySequenceBreakers);
        QCOMPARE(back->sampling.samplerOrder, s.sampling.samplerOrder);
        QCOMPARE(back->sampling.textBias.size(), size_t(2));
        QCOMPARE(back->sampling.bannedPhrases, s.sampling.bannedPhrases);
        QVERIFY(!back->sampling.bannedInsideWords); // whole words unless set
        QVERIFY(json.find("banned_inside_words") == std::string::npos);
        QVERIFY(parseSettings(R"({"banned_inside_words": true})")->sampling.bannedInsideWords);
        QVERIFY(!parseSettings(R"({"banned_inside_words": 1})").ok());
        QVERIFY(!parseSettings(R"({"banned_phrases": [""]})").ok());
        QVERIFY(!parseSettings(R"({"text_bias": {"x": 500}})").ok());
        QVERIFY(!parseSettings(R"({"text_bias": ["x"]})").ok());
        QCOMPARE(settingsJson(*back), json);
        QVERIFY(!parseSettings(R"({"sampler_order": ["top_k", "sideways"]})").ok());
        QVERIFY(!parseSettings(R"({"sampler_order": ["top_k", "top_k"]})").ok());
        QVERIFY(!parseSettings(R"({"min_p": 1.5})").ok());
        QVERIFY(!parseSettings(R"({"mirostat": 1})").ok());
        QVERIFY(!parseSettings(R"({"typical_p": 0})").ok());
        QVERIFY(!parseSettings(R"({"dry_sequence_breakers": [""]})").ok());
    }

    void badSettingsAreRefusedWithTheirName_data() {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("names");
        QTest::newRow("not JSON") << "{temperature: 1"
                                  << "JSON object";
        QTest::newRow("an array") << "[1, 2]"
                                  << "JSON object";
        QTest::newRow("a string") << "\"warm\""
                                  << "JSON object";
        QTest::newRow("temperature as text") << R"({"temperature": "hot"})"
                                             << "temperature";
        QTest::newRow("temperature too high") << R"({"temperature": 11})"
                                              << "temperature";
        QTest::newRow("negative top_k") << R"({"top_k": -1})"
                                        << "top_k";
        QTest::newRow("fractional top_k") << R"({"top_k": 1.5})"
                                          << "top_k";
        QTest::newRow("top_p zero") << R"({"top_p": 0})"
                                    << "top_p";
        QTest::newRow("penalty below 1") << R"({"repetition_penalty": 0.5})"
                                         << "repetition_penalty";
        QTest::newRow("max_tokens as bool") << R"({"max_tokens": true})"
                                            << "max_tokens";
        QTest::newRow("negative seed") << R"({"seed": -3})"
                                       << "seed";
        QTest::newRow("stop as string") << R"({"stop": "\n"})"
                                        << "stop";
        QTest::newRow("empty stop") << R"({"stop": [""]})"
                                    << "stop";
        QTest::newRow("ignore_eos as 1") << R"({"ignore_eos": 1})"
                                         << "ignore_eos";
        QTest::newRow("window zero") << R"({"window": 0})"
                                     << "window";
        QTest::newRow("overlap = window") << R"({"window": 16, "overlap": 16})"
                                          << "overlap";
        QTest::newRow("overlap alone") << R"({"overlap": 4})"
                                       << "overlap";
        QTest::newRow("unknown memory layout") << R"({"memory": "sometimes"})"
                                               << "memory";
        QTest::newRow("memory layout as bool") << R"({"memory": true})"
                                               << "memory";
        QTest::newRow("lore budget zero") << R"({"lore_budget": 0})"
                                          << "lore_budget";
    }
    void badSettingsAreRefusedWithTheirName() {
        QFETCH(QString, json);
        QFETCH(QString, names);
        auto s = parseSettings(json.toStdString());
        QVERIFY(!s.ok());
        QCOMPARE(s.error().kind, ErrorKind::InvalidSettings);
        QVERIFY2(QString::fromStdString(s.error().message).contains(names),
                 s.error().message.c_str());
        QVERIFY(describe(s.error()).find("invalid-settings") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestStorySettings)
#include "tst_story_settings.moc"
