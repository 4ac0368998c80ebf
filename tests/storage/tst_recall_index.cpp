// The recall index (schema v7, recall_store.h): chunks, kept in the passage's own
// transaction through inserts, edits, undone edits, deletes and duplicates; writes of
// an older build (plain SQL on the passages) never found by stale words and indexed at
// the next open, with progress that can stop; a damaged index rebuilt; query syntax and
// any script typed in a story never break a search.
#include "connection.h"
#include "statement.h"
#include "verify_ok.h"

#include "titled_story.h"

#include <baton/storage/database.h>
#include <baton/storage/recall_store.h>
#include <baton/storage/story_store.h>

#include <QTemporaryDir>
#include <QtTest>

using namespace baton::storage;

namespace {

std::vector<int64_t> passagesFound(Database& db, int64_t story, const std::string& term) {
    auto hits = db.recall().search(story, {term}, 50);
    std::vector<int64_t> out;
    if (!hits)
        return {-1};
    for (const auto& h : *hits)
        out.push_back(h.passageId);
    return out;
}

} // namespace

class TestRecallIndex : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    int m_n = 0;

    std::string fresh() {
        return (m_tmp.path() + "/r" + QString::number(++m_n) + ".db").toStdString();
    }

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_tmp.isValid());
    }

    void chunksAreSentencesOfOneParagraph() {
        // A generated piece is one chunk.
        auto one = recallChunks("and the door was blue");
        QCOMPARE(one.size(), size_t(1));
        QCOMPARE(one[0].end, size_t(21));
        // Paragraphs never share a chunk; sentences are packed up to the size.
        std::string text = "First one. Second one.\n\nA new paragraph.";
        auto two = recallChunks(text);
        QCOMPARE(two.size(), size_t(2));
        QCOMPARE(text.substr(two[0].start, two[0].end - two[0].start),
                 std::string("First one. Second one.\n\n"));
        QCOMPARE(text.substr(two[1].start), std::string("A new paragraph."));
        // A long paragraph: chunks of whole sentences, none above the size, all covered.
        std::string para;
        for (int i = 0; i < 60; ++i)
            para += "Sentence number " + std::to_string(i) + " ends here. ";
        auto many = recallChunks(para);
        QVERIFY(many.size() >= 4);
        size_t at = 0;
        for (const auto& c : many) {
            QCOMPARE(c.start, at);
            QVERIFY(c.end - c.start <= kRecallChunkBytes);
            QVERIFY2(para.substr(c.start, c.end - c.start).rfind("here. ") == c.end - c.start - 6,
                     "a chunk ends after a sentence");
            at = c.end;
        }
        QCOMPARE(at, para.size());
        // No spaces, two-byte characters: cut at character boundaries.
        std::string wide;
        for (int i = 0; i < 500; ++i)
            wide += "é";
        for (const auto& c : recallChunks(wide)) {
            QVERIFY(c.end - c.start <= kRecallChunkBytes);
            QCOMPARE((c.end - c.start) % 2, size_t(0));
        }
        QVERIFY(recallChunks("  \n\n \n").empty());
        QVERIFY(recallChunks("").empty());
    }

    void indexFollowsEveryWrite() {
        auto db = Database::open(fresh());
        BATON_VERIFY_OK(db);
        auto& stories = (*db)->stories();
        auto story = stories.create(titled("Vault"));
        BATON_VERIFY_OK(story);
        auto other = stories.create(titled("Other"));
        BATON_VERIFY_OK(other);
        auto p1 =
            stories.append(*story, "The key lies under the blue stone. ", PassageAuthor::User);
        auto p2 = stories.append(*story, "Elinor walked home.", PassageAuthor::Model);
        BATON_VERIFY_OK(p2);
        BATON_VERIFY_OK(
            stories.append(*other, "A blue stone in another story.", PassageAuthor::User));
        QCOMPARE(passagesFound(**db, *story, "stone"), std::vector<int64_t>{*p1});
        QCOMPARE(passagesFound(**db, *story, "stones"), std::vector<int64_t>{*p1}); // stemmed
        QCOMPARE(passagesFound(**db, *story, "ELINOR"), std::vector<int64_t>{*p2});
        auto hit = (*db)->recall().search(*story, {"blue stone"}, 5);
        BATON_VERIFY_OK(hit);
        QCOMPARE(hit->size(), size_t(1));
        QCOMPARE(hit->front().matched, std::vector<std::string>{"blue stone"}); // a phrase
        QCOMPARE(hit->front().start, int64_t(0));
        QCOMPARE(hit->front().end, int64_t(35));

        // An edit: the old words are gone in the same transaction, the new ones there.
        ReplacedPassage replaced;
        BATON_VERIFY_OK(
            stories.editPassage(*p1, "The key lies under the red brick. ", false, &replaced));
        QCOMPARE(passagesFound(**db, *story, "stone"), std::vector<int64_t>{});
        QCOMPARE(passagesFound(**db, *story, "brick"), std::vector<int64_t>{*p1});
        BATON_VERIFY_OK(stories.undoEdit(replaced));
        QCOMPARE(passagesFound(**db, *story, "stone"), std::vector<int64_t>{*p1});
        QCOMPARE(passagesFound(**db, *story, "brick"), std::vector<int64_t>{});

        // A duplicate is indexed under its own passages.
        auto copy = stories.duplicate(*story, "Vault (copy)");
        BATON_VERIFY_OK(copy);
        auto copied = passagesFound(**db, *copy, "stone");
        QCOMPARE(copied.size(), size_t(1));
        QVERIFY(copied[0] != *p1);

        // Deleting passages and stories takes their chunks.
        BATON_VERIFY_OK(stories.removePassage(*p2));
        QCOMPARE(passagesFound(**db, *story, "Elinor"), std::vector<int64_t>{});
        BATON_VERIFY_OK(stories.remove(*story));
        QCOMPARE(passagesFound(**db, *story, "stone"), std::vector<int64_t>{});
        QCOMPARE(passagesFound(**db, *copy, "stone"), copied);
        QCOMPARE(*(*db)->recall().check(), true);
        QCOMPARE(*(*db)->recall().pending(), int64_t(0));
        QCOMPARE(connectionOf(**db).queryInt(
                     "SELECT count(*) FROM passage_chunks c LEFT JOIN passages p ON "
                     "p.id = c.passage_id WHERE p.id IS NULL"),
                 int64_t(0));
    }

    void otherStoriesNeverCrowdAStoryOut() {
        auto db = Database::open(fresh());
        BATON_VERIFY_OK(db);
        auto& stories = (*db)->stories();
        const int64_t crowd = *stories.create(titled("Crowd"));
        for (int i = 0; i < 300; ++i)
            BATON_VERIFY_OK(
                stories.append(crowd, "A stone, a stone, a stone. ", PassageAuthor::User));
        const int64_t mine = *stories.create(titled("Mine"));
        const int64_t p = *stories.append(mine, "One old stone by the road. ", PassageAuthor::User);
        BATON_VERIFY_OK(stories.append(mine, "Nothing else here. ", PassageAuthor::User));
        QCOMPARE(passagesFound(**db, mine, "stone"), std::vector<int64_t>{p});
        auto few = (*db)->recall().search(mine, {"stone"}, 1);
        BATON_VERIFY_OK(few);
        QCOMPARE(few->size(), size_t(1));
        QCOMPARE(few->front().passageId, p);
        QCOMPARE(few->front().matched, std::vector<std::string>{"stone"});
    }

    void hostileQueriesNeverBreak() {
        auto db = Database::open(fresh());
        BATON_VERIFY_OK(db);
        auto story = (*db)->stories().create(titled("Hostile"));
        BATON_VERIFY_OK(story);
        const std::vector<std::string> texts = {
            "He said \"NEAR(a b)\" and * then AND OR NOT ( ) text: ^start {x} - + ;",
            "東京の夜は静かだった。猫が鳴いた。",
            "Привет, Ёлка! Ünïcödé façade.",
            "emoji 🐉🔥 and \x01\x02 control",
            std::string("nul\0inside", 10),
            "bad utf-8 \xff\xfe\xc3 here"};
        for (const auto& t : texts)
            BATON_VERIFY_OK((*db)->stories().append(*story, t, PassageAuthor::User));
        const std::vector<std::string> queries = {"\"",
                                                  "\"\"",
                                                  "NEAR(a b)",
                                                  "*",
                                                  "a*",
                                                  "AND",
                                                  "OR",
                                                  "NOT",
                                                  "(",
                                                  ")",
                                                  "text:x",
                                                  "^start",
                                                  "{x}",
                                                  "-",
                                                  "+",
                                                  ";DROP TABLE passages;--",
                                                  "東京",
                                                  "Ёлка",
                                                  "façade",
                                                  "🐉",
                                                  "\xff\xfe",
                                                  "",
                                                  " ",
                                                  "x\"y",
                                                  std::string("nu\0l", 4),
                                                  "recall_index",
                                                  std::string(5000, 'a')};
        for (const auto& q : queries) {
            auto r = (*db)->recall().search(*story, {q}, 10);
            QVERIFY2(bool(r), q.c_str());
        }
        auto all = (*db)->recall().search(*story, queries, 10);
        BATON_VERIFY_OK(all);
        QCOMPARE(passagesFound(**db, *story, "near").size(), size_t(1));
        QCOMPARE(passagesFound(**db, *story, "facade").size(), size_t(1)); // diacritics folded
        QCOMPARE(passagesFound(**db, *story, "ёлка").size(), size_t(1));
        QCOMPARE(*(*db)->recall().check(), true);
        // Every chunk is its passage's bytes, whatever the script or encoding.
        QCOMPARE(connectionOf(**db).queryInt(
                     "SELECT count(*) FROM passage_chunks c JOIN passages p ON p.id = c.passage_id "
                     "WHERE substr(CAST(p.text AS BLOB), c.start_byte + 1, c.end_byte - "
                     "c.start_byte) != CAST(c.text AS BLOB)"),
                 int64_t(0));
    }

    void olderBuildsWritesWaitAndAreIndexedAtOpen() {
        const std::string path = fresh();
        int64_t story = 0, first = 0;
        {
            auto db = Database::open(path);
            BATON_VERIFY_OK(db);
            story = *(*db)->stories().create(titled("Old"));
            first = *(*db)->stories().append(story, "The lamp was green.", PassageAuthor::User);
        }
        {
            // An older build knows nothing of the index: plain SQL on the passages.
            Connection raw(path, Connection::Mode::ReadWrite);
            raw.exec("PRAGMA foreign_keys=ON");
            for (int i = 0; i < 1200; ++i)
                raw.prepare("INSERT INTO passages (story_id, parent_id, author, text, "
                            "created_at) VALUES (?1, ?2, 1, ?3, 0)")
                    .bind(1, story)
                    .bind(2, first)
                    .bind(3, "Passage " + std::to_string(i) + " of the ledger.")
                    .run();
            raw.prepare("UPDATE passages SET text = 'The lamp was amber.' WHERE id = ?1")
                .bind(1, first)
                .run();
        }
        {
            OpenOptions readOnly;
            readOnly.readOnly = true;
            auto db = Database::open(path, readOnly);
            BATON_VERIFY_OK(db);
            // Stale words are gone at once (the triggers); the new text waits.
            QCOMPARE(passagesFound(**db, story, "green"), std::vector<int64_t>{});
            QCOMPARE(passagesFound(**db, story, "amber"), std::vector<int64_t>{});
            QCOMPARE(*(*db)->recall().pending(), int64_t(1201));
        }
        {
            // A cancelled pass indexes whole batches and leaves the rest waiting.
            OpenOptions stop;
            std::vector<std::pair<int64_t, int64_t>> seen;
            stop.indexProgress = [&](int64_t done, int64_t total) {
                seen.emplace_back(done, total);
                return false;
            };
            auto db = Database::open(path, stop);
            BATON_VERIFY_OK(db);
            QCOMPARE(seen.size(), size_t(1));
            QCOMPARE(seen[0].second, int64_t(1201));
            QCOMPARE(*(*db)->recall().pending(), int64_t(1201) - seen[0].first);
        }
        OpenOptions report;
        int64_t last = 0;
        report.indexProgress = [&](int64_t done, int64_t total) {
            last = done;
            return done <= total;
        };
        auto db = Database::open(path, report);
        BATON_VERIFY_OK(db);
        QVERIFY(last > 0);
        QCOMPARE(*(*db)->recall().pending(), int64_t(0));
        QCOMPARE(passagesFound(**db, story, "amber"), std::vector<int64_t>{first});
        // A word in more chunks than kRecallMaxMatches is too common to find anything by.
        QVERIFY(kRecallMaxMatches < 1200);
        QCOMPARE(passagesFound(**db, story, "ledger").size(), size_t(0));
        QCOMPARE(passagesFound(**db, story, "1199").size(), size_t(1));
    }

    void damagedIndexIsRebuilt() {
        const std::string path = fresh();
        int64_t story = 0;
        {
            auto db = Database::open(path);
            BATON_VERIFY_OK(db);
            story = *(*db)->stories().create(titled("Damaged"));
            for (int i = 0; i < 200; ++i)
                BATON_VERIFY_OK((*db)->stories().append(
                    story, "Line " + std::to_string(i) + " about the harbour. ",
                    PassageAuthor::User));
            // The index's own pages rewritten behind its back.
            auto& c = connectionOf(**db);
            c.exec("UPDATE recall_index_data SET block = zeroblob(length(block)) WHERE id > 10");
            QCOMPARE(*(*db)->recall().check(), false);
        }
        auto db = Database::open(path);
        BATON_VERIFY_OK(db);
        QCOMPARE(*(*db)->recall().check(), true);
        QCOMPARE(passagesFound(**db, story, "harbour").size(), size_t(50));
    }
};

QTEST_GUILESS_MAIN(TestRecallIndex)
#include "tst_recall_index.moc"
