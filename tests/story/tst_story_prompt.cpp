// What the model reads (story/prompt.h): the memory, the passages after a saved
// state, the author's note.
#include <baton/story/prompt.h>

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
        const Prompt p = continuationPrompt(s, path(), 0);
        QCOMPARE(p.segments.size(), size_t(5));
        QCOMPARE(p.segments[0].kind, SegmentKind::Memory);
        QCOMPARE(p.segments[1].passageId, int64_t(10));
        QCOMPARE(p.segments[4].kind, SegmentKind::AuthorsNote);
        QCOMPARE(p.text(), std::string("Memory.\n\nOne. Two. Three.\n[Author's note: Note.]\n"));
    }

    void afterASavedState() {
        storage::Story s;
        s.memory = "Memory.";
        // The state at passage 11 holds the memory and passages 10 and 11.
        const Prompt p = continuationPrompt(s, path(), 11);
        QCOMPARE(p.segments.size(), size_t(1));
        QCOMPARE(p.segments[0].passageId, int64_t(12));
        QCOMPARE(p.text(), std::string("Three."));
        // A state at the last passage: only the note (none here) is read.
        QVERIFY(continuationPrompt(s, path(), 12).segments.empty());
        // An empty story: only the memory.
        QCOMPARE(continuationPrompt(s, {}, 0).text(), std::string("Memory.\n\n"));
    }
};

QTEST_GUILESS_MAIN(TestStoryPrompt)
#include "tst_story_prompt.moc"
