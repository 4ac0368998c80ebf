// Token alternatives (story/token_choices.h): the blob's round trip and everything a
// damaged one is refused for, what the encoder leaves out, the alignment with a text
// edited or cut after it was recorded, and the branch at a token in a real database
// (its text, its choices, its generation, the refusals). Torch-free: the sanitizer
// build runs it.
#include "test_support.h"
#include "verify_ok.h"

#include <baton/storage/database.h>
#include <baton/storage/generation_store.h>
#include <baton/storage/story_store.h>
#include <baton/storage/token_choice_store.h>
#include <baton/story/token_choices.h>

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace baton;
using story::Alternative;
using story::TokenChoice;

namespace {

// " It", " was", " dark", "." with a few alternatives each (log-probabilities).
std::vector<TokenChoice> sample() {
    return {
        {" It", -0.5f, {{" It", -0.5f}, {" The", -1.25f}, {" She", -2.0f}}},
        {" was", -0.25f, {{" was", -0.25f}, {" is", -1.5f}}},
        {" dark", -3.0f, {{" cold", -1.0f}, {" late", -2.0f}, {" dark", -3.0f}}},
        {".", -0.125f, {{".", -0.125f}, {",", -2.5f}, {"\n", -3.5f}}},
    };
}

bool same(const std::vector<TokenChoice>& a, const std::vector<TokenChoice>& b) {
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].text != b[i].text || a[i].alternatives.size() != b[i].alternatives.size())
            return false;
        if (!(a[i].logprob == b[i].logprob ||
              (std::isnan(a[i].logprob) && std::isnan(b[i].logprob))))
            return false;
        for (size_t j = 0; j < a[i].alternatives.size(); ++j)
            if (a[i].alternatives[j].text != b[i].alternatives[j].text ||
                a[i].alternatives[j].logprob != b[i].alternatives[j].logprob)
                return false;
    }
    return true;
}

} // namespace

class TestTokenChoices : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    int m_dbs = 0;

    std::unique_ptr<storage::Database> openDb() {
        auto db = storage::Database::open(
            m_tmp.filePath(QString("choices-%1.db").arg(++m_dbs)).toStdString());
        return db.ok() ? std::move(*db) : nullptr;
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        QVERIFY(m_tmp.isValid());
    }

    void roundTrip() {
        const auto choices = sample();
        const auto blob = story::encodeChoices(choices);
        auto back = story::decodeChoices(blob);
        BATON_VERIFY_OK(back);
        QVERIFY(same(*back, choices));
        // Small: an 8-byte header, and per token its text and probability and the
        // alternatives' (2 bytes of length and 4 of float each) and their count.
        size_t expected = 8;
        for (const auto& c : choices) {
            expected += 2 + c.text.size() + 4 + 1;
            for (const auto& a : c.alternatives)
                expected += 2 + a.text.size() + 4;
        }
        QCOMPARE(blob.size(), expected);
        // A token whose probability was not recorded reads back as unknown.
        std::vector<TokenChoice> unknown = {{"a", std::nanf(""), {}}};
        auto u = story::decodeChoices(story::encodeChoices(unknown));
        BATON_VERIFY_OK(u);
        QVERIFY(std::isnan(u->front().logprob));
        // None at all.
        auto none = story::decodeChoices(story::encodeChoices({}));
        BATON_VERIFY_OK(none);
        QVERIFY(none->empty());
    }

    void encoderLeavesOutWhatCannotBePicked() {
        // Empty texts, pieces of a character, and more than 20 alternatives.
        TokenChoice c{"\xc3\xa9", -0.5f, {}};
        c.alternatives.push_back({"", -1.0f});
        c.alternatives.push_back({"\xc3", -1.5f});
        for (int i = 0; i < 25; ++i)
            c.alternatives.push_back({"w" + std::to_string(i), -2.0f - float(i)});
        auto back = story::decodeChoices(story::encodeChoices({c}));
        BATON_VERIFY_OK(back);
        QCOMPARE(back->front().alternatives.size(), size_t(20));
        QCOMPARE(back->front().alternatives.front().text, std::string("w0"));
        // A token whose own text is not UTF-8 ends the run: those after it would not align.
        auto cut = story::decodeChoices(
            story::encodeChoices({{"a", -1, {}}, {"\xff", -1, {}}, {"b", -1, {}}}));
        BATON_VERIFY_OK(cut);
        QCOMPARE(cut->size(), size_t(1));
    }

    void aBlobStaysWithinTheStoragesLimit() {
        // 6,000 tokens with 20 alternatives each would take about 2 MB: the leading ones
        // that fit are kept, and they still describe the text.
        std::vector<TokenChoice> many;
        std::string text;
        for (int i = 0; i < 6000; ++i) {
            TokenChoice c{" w" + std::to_string(i), -1.0f, {}};
            for (int a = 0; a < 20; ++a)
                c.alternatives.push_back({" alt" + std::to_string(a), -2.0f});
            text += c.text;
            many.push_back(std::move(c));
        }
        const auto blob = story::encodeChoices(many);
        QVERIFY(blob.size() <= story::kMaxChoicesBlob);
        auto back = story::decodeChoices(blob);
        BATON_VERIFY_OK(back);
        QVERIFY(back->size() > 3000 && back->size() < 6000);
        QCOMPARE(story::alignChoices(*back, text).size(), back->size());
    }

    void damagedBlobsAreRefused_data() {
        QTest::addColumn<QByteArray>("blob");
        const auto good = story::encodeChoices(sample());
        const QByteArray g(reinterpret_cast<const char*>(good.data()), qsizetype(good.size()));
        QTest::newRow("empty") << QByteArray();
        QTest::newRow("magic") << QByteArray("XTC").append(g.mid(3));
        QTest::newRow("version") << g.left(3).append(char(9)).append(g.mid(4));
        for (int cut : {4, 7, 8, 10, int(g.size()) / 2, int(g.size()) - 1})
            QTest::newRow(qPrintable(QString("truncated at %1").arg(cut))) << g.left(cut);
        QTest::newRow("trailing byte") << QByteArray(g).append('x');
        // A count of 2^32 - 1 tokens in a few bytes.
        QTest::newRow("count lies") << g.left(4).append("\xff\xff\xff\xff", 4).append(g.mid(8));
        // The first token's text (" It", at byte 10) with a byte that is not UTF-8.
        QTest::newRow("text not UTF-8") << QByteArray(g).replace(10, 1, "\xff");
        // Its log-probability (bytes 13-16) made +1.
        QByteArray positive = g;
        const float one = 1.0f;
        positive.replace(13, 4, reinterpret_cast<const char*>(&one), 4);
        QTest::newRow("probability above 1") << positive;
        // Its count of alternatives (byte 17) made 200.
        QTest::newRow("too many alternatives") << QByteArray(g).replace(17, 1, "\xc8");
    }
    void damagedBlobsAreRefused() {
        QFETCH(QByteArray, blob);
        const std::vector<uint8_t> bytes(blob.begin(), blob.end());
        auto r = story::decodeChoices(bytes);
        QVERIFY(!r);
        QVERIFY(r.error().message.find("damaged") != std::string::npos);
    }

    void alignmentFollowsTheText() {
        const auto choices = sample();
        QCOMPARE(story::alignChoices(choices, " It was dark.").size(), size_t(4));
        // Cut back (a stop string, a whole sentence): the tokens still there.
        QCOMPARE(story::alignChoices(choices, " It was da").size(), size_t(2));
        // Edited in the middle: only the tokens before the edit describe it.
        QCOMPARE(story::alignChoices(choices, " It is dark.").size(), size_t(1));
        QCOMPARE(story::alignChoices(choices, "It was dark.").size(), size_t(0));
        // Text after the recorded tokens changes nothing.
        QCOMPARE(story::alignChoices(choices, " It was dark. More").size(), size_t(4));
    }

    void branchAtToken() {
        auto db = openDb();
        QVERIFY(db);
        storage::Story s;
        s.title = "Branching";
        const int64_t story = *db->stories().create(s);
        const int64_t first = *db->stories().append(story, "Once.", storage::PassageAuthor::User);
        const int64_t passage =
            *db->stories().append(story, " It was dark.", storage::PassageAuthor::Model);
        const int64_t after =
            *db->stories().append(story, " The end.", storage::PassageAuthor::Model);
        BATON_VERIFY_OK(db->tokenChoices().set(passage, story::encodeChoices(sample())));

        // " dark" (token 2) becomes " cold" (its alternative 0).
        auto branched = story::branchAtToken(*db, story, {passage, 2, 0}, R"({"seed":5})");
        BATON_VERIFY_OK(branched);
        auto p = db->stories().passage(*branched);
        BATON_VERIFY_OK(p);
        QCOMPARE(p->text, std::string(" It was cold"));
        QCOMPARE(p->parentId, first);
        QCOMPARE(p->author, storage::PassageAuthor::Model);
        QCOMPARE(db->stories().get(story)->currentPassageId, *branched);
        // A one-token generation, with the settings it was given.
        QVERIFY(p->generationId != 0);
        QCOMPARE(db->generations().get(p->generationId)->settingsJson,
                 std::string(R"({"seed":5})"));
        // The old branch is all there.
        QCOMPARE(db->stories().passage(passage)->text, std::string(" It was dark."));
        QCOMPARE(db->stories().children(story, passage)->front().id, after);
        // Its choices: the tokens before, and the picked one, whose list keeps the token
        // it replaced.
        auto choices = story::passageChoices(*db, *branched);
        BATON_VERIFY_OK(choices);
        QCOMPARE(choices->size(), size_t(3));
        QCOMPARE(choices->back().text, std::string(" cold"));
        QCOMPARE(choices->back().logprob, -1.0f);
        QCOMPARE(choices->back().alternatives.size(), size_t(3));

        // The token written there, which was not among its alternatives, joins them in
        // order of probability.
        auto rare = sample();
        rare[1].alternatives = {{" is", -0.1f}, {" seemed", -4.0f}};
        BATON_VERIFY_OK(db->tokenChoices().set(passage, story::encodeChoices(rare)));
        auto second = story::branchAtToken(*db, story, {passage, 1, 1});
        BATON_VERIFY_OK(second);
        auto c2 = *story::passageChoices(*db, *second);
        QCOMPARE(db->stories().passage(*second)->text, std::string(" It seemed"));
        QCOMPARE(c2.back().alternatives.size(), size_t(3));
        QCOMPARE(c2.back().alternatives[1].text, std::string(" was"));
        QCOMPARE(c2.back().alternatives[1].logprob, -0.25f);
    }

    void branchRefusals() {
        auto db = openDb();
        QVERIFY(db);
        storage::Story s;
        s.title = "A";
        const int64_t a = *db->stories().create(s);
        const int64_t b = *db->stories().create(s);
        const int64_t passage =
            *db->stories().append(a, " It was dark.", storage::PassageAuthor::Model);
        const int64_t bare = *db->stories().append(a, " More.", storage::PassageAuthor::Model);
        BATON_VERIFY_OK(db->tokenChoices().set(passage, story::encodeChoices(sample())));
        const int64_t before = *db->stories().passageCount(a);
        QVERIFY(!story::branchAtToken(*db, b, {passage, 0, 1}));  // another story's passage
        QVERIFY(!story::branchAtToken(*db, a, {passage, 4, 0}));  // no such token
        QVERIFY(!story::branchAtToken(*db, a, {passage, -1, 0})); // no such token
        QVERIFY(!story::branchAtToken(*db, a, {passage, 1, 2}));  // no such alternative
        QVERIFY(!story::branchAtToken(*db, a, {passage, 0, 0}));  // the text already written
        QVERIFY(!story::branchAtToken(*db, a, {bare, 0, 0}));     // nothing recorded
        QVERIFY(!story::branchAtToken(*db, a, {999, 0, 0}));      // no such passage
        // An edit of the passage leaves only the tokens before it.
        BATON_VERIFY_OK(db->stories().editPassage(passage, " It is dark."));
        QVERIFY(!story::branchAtToken(*db, a, {passage, 2, 0}));
        BATON_VERIFY_OK(story::branchAtToken(*db, a, {passage, 0, 1}));
        QCOMPARE(*db->stories().passageCount(a), before + 1);
        // A damaged blob is an error, not a crash or a guess.
        BATON_VERIFY_OK(db->tokenChoices().set(bare, {'B', 'T', 'C', 1, 9}));
        auto damaged = story::passageChoices(*db, bare);
        QVERIFY(!damaged);
        QVERIFY(damaged.error().message.find("damaged") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestTokenChoices)
#include "tst_token_choices.moc"
