// What the model reads (story/prompt.h): the memory (once or in every window), the
// passages after a saved state, text not sent yet, world info, the author's note; and
// which world info fires (story/lore.h); an adventure's turns and stop
// (story/adventure.h).
#include "test_support.h"

#include <baton/engine/tokenizer.h>
#include <baton/story/adventure.h>
#include <baton/story/lore.h>
#include <baton/story/prompt.h>
#include <baton/story/title.h>

#include <QtTest>

using namespace baton;
using namespace baton::story;

class TestStoryPrompt : public QObject {
    Q_OBJECT

    static std::vector<storage::Passage> path() {
        std::vector<storage::Passage> p(3);
        const char* texts[] = {"One. ", "Two. ", "Three."};
        for (int i = 0; i < 3; ++i) {
            p[size_t(i)].id = 10 + i;
            p[size_t(i)].text = texts[i];
        }
        return p;
    }

private Q_SLOTS:
    void memoryAndNote() {
        storage::Story s;
        s.memory = "  The ship is called Tern.\n";
        s.authorsNote = "Keep it short. ";
        QCOMPARE(memoryPrefix(s), std::string("The ship is called Tern.\n\n"));
        QCOMPARE(authorsNoteText(s), std::string("\n[Author's note: Keep it short.]\n"));
        s.memory = "  \n";
        s.authorsNote = "";
        QCOMPARE(memoryPrefix(s), std::string());
        QCOMPARE(authorsNoteText(s), std::string());
    }

    void fromTheBeginning() {
        storage::Story s;
        s.memory = "Memory.";
        s.authorsNote = "Note.";
        const Prompt p = continuationPrompt(s, path(), 0, MemoryLayout::Once);
        QCOMPARE(p.segments.size(), size_t(4));
        QCOMPARE(p.segments[0].kind, SegmentKind::Memory);
        QCOMPARE(p.segments[1].passageId, int64_t(10));
        // The note is guidance, placed before the continuation, not story text.
        QCOMPARE(p.guide.size(), size_t(1));
        QCOMPARE(p.guide[0].kind, SegmentKind::AuthorsNote);
        QCOMPARE(p.guide[0].text, std::string("\n[Author's note: Note.]\n"));
        QCOMPARE(p.text(), std::string("Memory.\n\nOne. Two. Three."));
    }

    void afterASavedState() {
        storage::Story s;
        s.memory = "Memory.";
        // The state at passage 11 holds the memory and passages 10 and 11.
        const Prompt p = continuationPrompt(s, path(), 11, MemoryLayout::Once);
        QCOMPARE(p.segments.size(), size_t(1));
        QCOMPARE(p.segments[0].passageId, int64_t(12));
        QCOMPARE(p.text(), std::string("Three."));
        // A state at the last passage: only the note (none here) is read.
        QVERIFY(continuationPrompt(s, path(), 12, MemoryLayout::Once).segments.empty());
        // An empty story: only the memory.
        QCOMPARE(continuationPrompt(s, {}, 0, MemoryLayout::Once).text(),
                 std::string("Memory.\n\n"));
    }

    void memoryInEveryWindow() {
        storage::Story s;
        s.memory = "Memory.";
        s.authorsNote = "Note.";
        // Not a segment of the stream: every window starts with it.
        const Prompt p = continuationPrompt(s, path(), 0, MemoryLayout::EveryWindow, {}, "Four.");
        QCOMPARE(p.text(), std::string("One. Two. Three.Four."));
        QCOMPARE(p.guide.size(), size_t(1));
        QCOMPARE(p.segments[3].passageId, int64_t(0)); // not sent yet
        QCOMPARE(pinnedText(s, MemoryLayout::EveryWindow), std::string("Memory.\n\n"));
        QCOMPARE(pinnedText(s, MemoryLayout::Once), std::string());
        QCOMPARE(stateLayout(s, MemoryLayout::EveryWindow), 1);
        QCOMPARE(stateLayout(s, MemoryLayout::Once), 0);
        s.memory = " ";
        QCOMPARE(stateLayout(s, MemoryLayout::EveryWindow), 0); // both read the same
    }

    // The guidance goes before an unfinished last sentence (after the last line break,
    // or after the last sentence end and its spaces), else at the end.
    void unfinishedSentences() {
        QCOMPARE(unfinishedTail("He left. She walked to the shrubbery and"),
                 std::string("She walked to the shrubbery and").size());
        QCOMPARE(unfinishedTail("Line one\nShe said, \"Go"), std::string("She said, \"Go").size());
        QCOMPARE(unfinishedTail("He left."), size_t(0));
        QCOMPARE(unfinishedTail("\"Go away!\" "), size_t(0));
        QCOMPARE(unfinishedTail("> look\n"), size_t(0));
        QCOMPARE(unfinishedTail("She said \u201cno.\u201d Then"), std::string("Then").size());
        QCOMPARE(unfinishedTail("Yes! And then"), std::string("And then").size());
        QCOMPARE(unfinishedTail("no sentence end at all"),
                 std::string("no sentence end at all").size());
        QCOMPARE(unfinishedTail(""), size_t(0));
    }

    void keysAreTypedCommaSeparated() {
        QCOMPARE(splitKeys(" Elinor, Miss Dashwood ,, \t"),
                 (std::vector<std::string>{"Elinor", "Miss Dashwood"}));
        QVERIFY(splitKeys(" , ").empty());
        QVERIFY(splitKeys("").empty());
        QCOMPARE(joinKeys({"Elinor", "Miss Dashwood"}), std::string("Elinor, Miss Dashwood"));
        QCOMPARE(splitKeys(joinKeys({"a", "b c"})), (std::vector<std::string>{"a", "b c"}));
    }

    void keysMatchWholeWords() {
        QVERIFY(keyOccurs("Then Elinor, smiling", "elinor"));
        QVERIFY(keyOccurs("ELINOR", "Elinor"));
        QVERIFY(!keyOccurs("Elinorish", "Elinor"));
        QVERIFY(!keyOccurs("Miss Elinor", "Miss  Elinor"));
        QVERIFY(keyOccurs("the Miss Dashwoods", "miss dashwood") == false);
        QVERIFY(keyOccurs("at Norland Park.", "Norland Park"));
        QVERIFY(keyOccurs("Zoë spoke", "Zoë"));
        QVERIFY(!keyOccurs("Zoëy", "Zoë"));
        QVERIFY(keyOccurs("a (sword) here", "(sword)"));
        QVERIFY(!keyOccurs("", "x"));
        QVERIFY(!keyOccurs("x", ""));
    }

    void worldInfoFiresInOrderWithinItsBudget() {
        auto tokenizer = engine::loadTokenizer(baton::test::gpt2TokenizerDir());
        QVERIFY(tokenizer.ok());
        auto entry = [](int64_t id, std::vector<std::string> keys, std::string content, int order) {
            storage::LoreEntry e;
            e.id = id;
            e.keys = std::move(keys);
            e.content = std::move(content);
            e.order = order;
            return e;
        };
        std::vector<storage::LoreEntry> lore = {
            entry(1, {"Elinor"}, "Elinor is the elder sister.", 20),
            entry(2, {"Marianne"}, "Marianne loves poetry.", 10),
            entry(3, {"Willoughby"}, "Willoughby is charming and false.", 30),
            entry(4, {"Colonel"}, "The Colonel is kind.", 5), // not in the text
            entry(5, {"Elinor"}, "Disabled.", 1),
            entry(6, {"Elinor"}, "Needs Norland too.", 2),
            entry(7, {"Marianne"}, "Needs Barton too.", 3),
        };
        lore[4].enabled = false;
        lore[5].secondaryKeys = {"Norland"};
        lore[6].secondaryKeys = {"Barton", "Delaford"};
        const std::string text = "At Barton, Marianne and elinor walked; Willoughby came.";
        auto all = selectLore(lore, text, **tokenizer, 1000);
        QCOMPARE(all.matches.size(), size_t(4)); // 7, 2, 1, 3 in ascending order
        QCOMPARE(all.matches[0].entry.id, int64_t(7));
        QCOMPARE(all.matches[0].key, std::string("Marianne + Barton"));
        QCOMPARE(all.matches[1].entry.id, int64_t(2));
        QCOMPARE(all.matches[2].entry.id, int64_t(1));
        QCOMPARE(all.matches[2].key, std::string("Elinor"));
        QCOMPARE(all.matches[3].entry.id, int64_t(3));
        for (const auto& m : all.matches) {
            QVERIFY(m.placed);
            QCOMPARE(m.tokens, int((*tokenizer)->encode(m.text).size()));
        }
        QCOMPARE(all.matches[1].text, std::string("\n[Marianne loves poetry.]\n"));
        // A budget that fits the first two: the third is left out, a smaller later one
        // still goes in.
        const int two = all.matches[0].tokens + all.matches[1].tokens;
        lore[3].keys = {"walked"};
        lore[3].content = "W.";
        lore[3].order = 40;
        auto some = selectLore(lore, text, **tokenizer, two + 6);
        QCOMPARE(some.matches.size(), size_t(5));
        QVERIFY(some.matches[0].placed && some.matches[1].placed);
        QVERIFY(!some.matches[2].placed && !some.matches[3].placed); // 1 and 3 do not fit
        QVERIFY(some.matches[4].placed);                             // "W." does
        QVERIFY(some.tokens <= two + 6);
        QCOMPARE(some.recordJson().find("\"id\":1,"), std::string::npos);
        QVERIFY(some.recordJson().find("\"id\":7,\"key\":\"Marianne + Barton\"") !=
                std::string::npos);
        // The scan depth: only the last tokens are searched.
        lore[1].scanDepth = 4; // Marianne is further back than 4 tokens
        auto shallow = selectLore(lore, text, **tokenizer, 1000);
        for (const auto& m : shallow.matches)
            QVERIFY(m.entry.id != 2);
        // The guidance: the entries in order, then the note.
        storage::Story s;
        s.authorsNote = "Note.";
        const Prompt p = continuationPrompt(s, path(), 12, MemoryLayout::EveryWindow, all);
        QVERIFY(p.segments.empty());
        QCOMPARE(p.guide.size(), size_t(5));
        QCOMPARE(p.guide[0].kind, SegmentKind::WorldInfo);
        QCOMPARE(p.guide[0].loreId, int64_t(7));
        QCOMPARE(p.guide[4].kind, SegmentKind::AuthorsNote);
    }

    void titlesFromOpeningWords() {
        QVERIFY(isUntitled("Untitled story") && isUntitled("Untitled adventure") && isUntitled(""));
        QVERIFY(!isUntitled("The Lighthouse"));
        QCOMPARE(titleFromText("The keeper climbed the stairs."),
                 std::string("The keeper climbed the stairs."));
        QCOMPARE(titleFromText("\n\n  It was a bright cold day in April, and the clocks were "
                               "striking thirteen."),
                 std::string("It was a bright cold day in April, and\xE2\x80\xA6"));
        QCOMPARE(titleFromText("> You open the door.\nA draught."),
                 std::string("You open the door."));
        QCOMPARE(titleFromText("Dear Sir,\nI write"), std::string("Dear Sir"));
        QCOMPARE(titleFromText(" \n "), std::string());
        // One long word is cut at a character, never inside one.
        const std::string longWord = std::string(39, 'a') + "\xC3\xA9\xC3\xA9";
        const std::string t = titleFromText(longWord);
        QCOMPARE(t, std::string(39, 'a') + "\xE2\x80\xA6");
    }

    void frameTurn_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("before");
        QTest::addColumn<QString>("framed");
        const int doIt = int(TurnKind::Do), say = int(TurnKind::Say), story = int(TurnKind::Story);
        QTest::newRow("do") << doIt << "open the door"
                            << ""
                            << "> You open the door.\n\n";
        QTest::newRow("do, I") << doIt << "I look around!"
                               << "x."
                               << "\n\n> You look around!\n\n";
        QTest::newRow("do, you, capital") << doIt << "You Climb"
                                          << "x\n"
                                          << "\n> You climb.\n\n";
        QTest::newRow("do, name") << doIt << "call NASA"
                                  << "x\n\n"
                                  << "> You call NASA.\n\n";
        QTest::newRow("do, a verb that starts with i") << doIt << "Iron  the\tshirt"
                                                       << ""
                                                       << "> You iron the shirt.\n\n";
        QTest::newRow("say") << say << "\"where is the key?\""
                             << ""
                             << "> You say, \u201CWhere is the key?\u201D\n\n";
        QTest::newRow("say, curly quotes") << say << "\u201Cafter you\u201D"
                                           << ""
                                           << "> You say, \u201CAfter you.\u201D\n\n";
        QTest::newRow("say, period") << say << "hello"
                                     << ""
                                     << "> You say, \u201CHello.\u201D\n\n";
        QTest::newRow("say, ellipsis") << say << "well\u2026"
                                       << ""
                                       << "> You say, \u201CWell\u2026\u201D\n\n";
        QTest::newRow("say, only quotes") << say << "\"\""
                                          << ""
                                          << "";
        QTest::newRow("story") << story << "  A storm rises.  "
                               << "x"
                               << "\n\nA storm rises.";
        QTest::newRow("empty") << doIt << "   "
                               << "x"
                               << "";
        QTest::newRow("only a subject") << doIt << "I "
                                        << ""
                                        << "";
    }
    void frameTurn() {
        QFETCH(int, kind);
        QFETCH(QString, input);
        QFETCH(QString, before);
        QFETCH(QString, framed);
        QCOMPARE(QString::fromStdString(
                     story::frameTurn(TurnKind(kind), input.toStdString(), before.toStdString())),
                 framed);
    }

    // An adventure's continuation stops before the player's next turn (once, however
    // often it is asked for); a story's keeps its settings.
    void anAdventureStopsBeforeThePlayersTurn() {
        engine::SamplingOptions s;
        s.stopStrings = {"THE END"};
        const auto adventure = continuationSampling(storage::StoryMode::Adventure, s);
        QCOMPARE(adventure.stopStrings, (std::vector<std::string>{"THE END", "\n>"}));
        QCOMPARE(continuationSampling(storage::StoryMode::Adventure, adventure).stopStrings,
                 adventure.stopStrings);
        QCOMPARE(continuationSampling(storage::StoryMode::Story, s).stopStrings, s.stopStrings);
    }
};

QTEST_GUILESS_MAIN(TestStoryPrompt)
#include "tst_story_prompt.moc"
