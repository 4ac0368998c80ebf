// Edits of saved text (story/edit.h): the diff finds exactly the passages whose text
// changed, a paragraph break that moved between passages changes none, text typed at a
// boundary joins the later passage, and saving an edit keeps the states before it.
#include "test_support.h"
#include "verify_ok.h"

#include <baton/storage/database.h>
#include <baton/storage/generation_store.h>
#include <baton/storage/state_store.h>
#include <baton/storage/story_store.h>
#include <baton/story/edit.h>

#include <QTemporaryDir>
#include <QtTest>

#include <random>

using namespace baton;
using story::PassageEdit;

namespace {

std::string joined(const std::vector<std::string>& parts) {
    std::string s;
    for (const auto& p : parts)
        s += p;
    return s;
}

std::vector<int64_t> idsFor(size_t n) {
    std::vector<int64_t> ids;
    for (size_t i = 0; i < n; ++i)
        ids.push_back(int64_t(i + 1));
    return ids;
}

// Applies edits to the passages' texts.
std::vector<std::string> applied(std::vector<std::string> texts,
                                 const std::vector<PassageEdit>& edits) {
    for (const auto& e : edits)
        texts[size_t(e.passageId - 1)] = e.after;
    return texts;
}

} // namespace

class TestStoryEdit : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;

private Q_SLOTS:
    void initTestCase() { baton::test::initTestProcess(); }

    void oneWordChangesOnePassage() {
        // Passages that begin and end with paragraph breaks, as generated chunks do.
        const std::vector<std::string> p = {"It was a dark night.\n\n",
                                            "Anne walked to the shrubbery",
                                            " and stopped.\n",
                                            "\nThe wind rose",
                                            " over the hills.\n\n\"Come,\" he said.",
                                            "\n\nShe did not answer."};
        std::string now = joined(p);
        now.replace(now.find("wind"), 4, "gale");
        const auto edits = story::diffTexts(idsFor(p.size()), p, now);
        QCOMPARE(edits.size(), size_t(1));
        QCOMPARE(edits[0].passageId, int64_t(4));
        QCOMPARE(edits[0].after, std::string("\nThe gale rose"));
        QCOMPARE(joined(applied(p, edits)), now);
    }

    void unchangedTextChangesNothing() {
        const std::vector<std::string> p = {"a\n", "\nb", "\n\nc"};
        QVERIFY(story::diffTexts(idsFor(3), p, joined(p)).empty());
    }

    void editsInTwoPlacesChangeTwoPassages() {
        const std::vector<std::string> p = {"One two three. ", "Four five six. ",
                                            "Seven eight nine. ", "Ten eleven twelve."};
        std::string now = joined(p);
        now.replace(now.find("two"), 3, "TWO");
        now.replace(now.find("eleven"), 6, "ELEVEN");
        const auto edits = story::diffTexts(idsFor(p.size()), p, now);
        QCOMPARE(edits.size(), size_t(2));
        QCOMPARE(edits[0].passageId, int64_t(1));
        QCOMPARE(edits[1].passageId, int64_t(4));
        QCOMPARE(joined(applied(p, edits)), now);
    }

    void textTypedAtABoundaryJoinsTheLaterPassage() {
        const std::vector<std::string> p = {"First part.", " Second part."};
        const std::string now = "First part. Inserted here." + std::string(" Second part.");
        const auto edits = story::diffTexts(idsFor(2), p, now);
        QCOMPARE(edits.size(), size_t(1));
        QCOMPARE(edits[0].passageId, int64_t(2));
        QCOMPARE(edits[0].after, std::string(" Inserted here. Second part."));
    }

    void deletionAcrossABoundaryChangesBoth() {
        const std::vector<std::string> p = {"Alpha beta gamma", " delta epsilon", " zeta."};
        std::string now = joined(p);
        now.erase(now.find(" gamma"), std::string(" gamma delta").size());
        const auto edits = story::diffTexts(idsFor(3), p, now);
        // Which of the equal spaces went is the diff's choice; both passages lost text.
        QCOMPARE(edits.size(), size_t(2));
        QCOMPARE(edits[0].passageId, int64_t(1));
        QCOMPARE(edits[1].passageId, int64_t(2));
        QVERIFY(edits[0].after.rfind("Alpha beta", 0) == 0 && edits[0].after.size() <= 11);
        QVERIFY(edits[1].after.find("epsilon") != std::string::npos);
        QCOMPARE(joined(applied(p, edits)), now);
    }

    void deletingAPassageWholeEmptiesIt() {
        const std::vector<std::string> p = {"Keep this. ", "Drop this. ", "Keep that."};
        const auto edits = story::diffTexts(idsFor(3), p, "Keep this. Keep that.");
        QCOMPARE(edits.size(), size_t(1));
        QCOMPARE(edits[0].passageId, int64_t(2));
        QCOMPARE(edits[0].after, std::string());
    }

    void multiByteCharactersStayWhole() {
        const std::vector<std::string> p = {"Café crème ", "— déjà vu ", "naïve."};
        std::string now = joined(p);
        now.replace(now.find("déjà"), std::string("déjà").size(), "dèjá");
        const auto edits = story::diffTexts(idsFor(3), p, now);
        QCOMPARE(edits.size(), size_t(1));
        QCOMPARE(edits[0].passageId, int64_t(2));
        QCOMPARE(edits[0].after, std::string("— dèjá vu "));
    }

    // Random edits of random passages: the concatenation is always the new text, and
    // a passage is reported only when its text changed.
    void randomEditsAreExact() {
        std::mt19937 rng(7);
        const std::vector<std::string> words = {"the",  "sun", " ",    "\n",   ".",     "é",
                                                "moon", ",",   "\n\n", "Anne", "walked"};
        for (int round = 0; round < 300; ++round) {
            std::vector<std::string> p(size_t(1 + rng() % 8));
            for (auto& t : p)
                for (int w = int(rng() % 6); w > 0; --w)
                    t += words[rng() % words.size()];
            std::string now = joined(p);
            for (int e = int(rng() % 3); e >= 0; --e) {
                const size_t at = now.empty() ? 0 : rng() % (now.size() + 1);
                size_t at8 = at;
                while (at8 < now.size() && (static_cast<unsigned char>(now[at8]) & 0xc0) == 0x80)
                    ++at8;
                size_t len = std::min(now.size() - at8, size_t(rng() % 5));
                while (at8 + len < now.size() &&
                       (static_cast<unsigned char>(now[at8 + len]) & 0xc0) == 0x80)
                    ++len;
                now.replace(at8, len, words[rng() % words.size()]);
            }
            const auto edits = story::diffTexts(idsFor(p.size()), p, now);
            const auto after = applied(p, edits);
            QCOMPARE(joined(after), now);
            for (const auto& e : edits)
                QVERIFY(e.before != e.after);
        }
    }

    // A generation stopped mid-sentence is cut back to its last whole sentence: the
    // chunk the cut falls in keeps the model as its author, the chunks after it go, the
    // states before the cut stay.
    void trimToSentenceCutsAnUnfinishedSentence() {
        auto db = storage::Database::open(m_tmp.filePath("trim.db").toStdString());
        BATON_VERIFY_OK(db);
        storage::Story s;
        s.title = "Trim";
        const int64_t id = *(*db)->stories().create(s);
        const int64_t user =
            *(*db)->stories().append(id, "> look around\n", storage::PassageAuthor::User);
        const int64_t gen = *(*db)->generations().begin(id, user, "{}", "[]");
        std::vector<int64_t> chunks;
        int64_t parent = user;
        for (const char* t :
             {"The room is dark", ". A lamp hangs", " from the beam. Then", " a door opens and"}) {
            parent = *(*db)->stories().addPassage(id, parent, t, storage::PassageAuthor::Model,
                                                  true, gen);
            chunks.push_back(parent);
            storage::StoredState st;
            st.passageId = parent;
            st.modelIdentity = "m";
            st.window = 16;
            st.formatVersion = 3;
            st.blob = {1};
            BATON_VERIFY_OK((*db)->states().save(st));
        }
        auto cut = story::trimToSentence(**db, id, gen);
        BATON_VERIFY_OK(cut);
        QCOMPARE(*cut, std::string(" Then a door opens and").size());
        QCOMPARE(*(*db)->stories().currentText(id),
                 std::string("> look around\nThe room is dark. A lamp hangs from the beam."));
        const auto path = *(*db)->stories().currentPath(id);
        QCOMPARE(path.back().id, chunks[2]);
        QCOMPARE(path.back().author, storage::PassageAuthor::Model);
        QCOMPARE((*db)->states().forPassage(chunks[1])->size(), size_t(1));
        QVERIFY((*db)->states().forPassage(chunks[2])->empty());
        // Now it ends a sentence: nothing more to cut; a generation without a sentence end
        // is kept whole.
        QCOMPARE(*story::trimToSentence(**db, id, gen), size_t(0));
        const int64_t gen2 = *(*db)->generations().begin(id, chunks[2], "{}", "[]");
        QVERIFY(
            (*db)
                ->stories()
                .addPassage(id, chunks[2], " and then", storage::PassageAuthor::Model, true, gen2)
                .ok());
        // " and then" has no sentence end of its own: the sentence began before it.
        QCOMPARE(*story::trimToSentence(**db, id, gen2), size_t(0));
        QVERIFY((*db)->stories().currentText(id)->size() > 0);
    }

    // Saving an edit in the middle keeps the states of the passages before it and
    // deletes those of the edited passage and after; find-and-replace takes the last
    // occurrence, and says so when there is none.
    void findAndReplaceKeepsTheStatesBeforeIt() {
        auto db = storage::Database::open(m_tmp.filePath("edit.db").toStdString());
        BATON_VERIFY_OK(db);
        storage::Story s;
        s.title = "Edits";
        auto id = (*db)->stories().create(s);
        BATON_VERIFY_OK(id);
        std::vector<int64_t> passages;
        for (int i = 0; i < 6; ++i) {
            auto p = (*db)->stories().append(*id, "Part " + std::to_string(i) + " of Anne. ",
                                             storage::PassageAuthor::Model);
            BATON_VERIFY_OK(p);
            passages.push_back(*p);
            storage::StoredState st;
            st.passageId = *p;
            st.windowIndex = i;
            st.modelIdentity = "m";
            st.window = 16;
            st.formatVersion = 2;
            st.blob = {1, 2, 3};
            BATON_VERIFY_OK((*db)->states().save(st));
        }
        QCOMPARE(*(*db)->states().countForStory(*id), int64_t(6));
        auto r = story::findAndReplace(**db, *id, "Part 3 of Anne", "Part 3 of Emma");
        BATON_VERIFY_OK(r);
        QCOMPARE(r->edits.size(), size_t(1));
        QCOMPARE(r->edits[0].passageId, passages[3]);
        QCOMPARE(r->statesDeleted, int64_t(3));
        QCOMPARE(*(*db)->states().countForStory(*id), int64_t(3));
        for (int i = 0; i < 3; ++i)
            QCOMPARE((*db)->states().forPassage(passages[size_t(i)])->size(), size_t(1));
        // The last occurrence: "Anne" is now last in part 5.
        r = story::findAndReplace(**db, *id, "Anne", "Elinor");
        BATON_VERIFY_OK(r);
        QCOMPARE(r->edits[0].passageId, passages[5]);
        QCOMPARE(*(*db)->stories().currentText(*id),
                 std::string("Part 0 of Anne. Part 1 of Anne. Part 2 of Anne. Part 3 of Emma. "
                             "Part 4 of Anne. Part 5 of Elinor. "));
        const auto missing = story::findAndReplace(**db, *id, "Wentworth", "x");
        QVERIFY(!missing);
        QVERIFY(missing.error().message.find("does not occur") != std::string::npos);
        QVERIFY(!story::findAndReplace(**db, *id, "", "x"));
    }
};

QTEST_GUILESS_MAIN(TestStoryEdit)
#include "tst_story_edit.moc"
