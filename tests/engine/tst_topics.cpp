// Topic diagnostics (method.md section 6): LDA recovers planted topics, fold-in
// inference, the Jensen-Shannon divergence, the sign test, and topic model files.
#include "cli_run.h"
#include "epub_fixture.h"
#include "test_support.h"
#include "tiny_model.h"
#include "verify_ok.h"

#include <baton/engine/scoring.h>
#include <baton/engine/topics.h>
#include <baton/storage/database.h>
#include <baton/storage/topic_store.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace baton::engine;

namespace {

constexpr int kTopics = 5, kWordsPerTopic = 30;

// Letters only (the word tokenizer splits at digits): "xaa", "xab", ...
std::string word(int i) {
    return std::string("x") + char('a' + i / 26) + char('a' + i % 26);
}

// Planted topic k puts its mass on words [k * 30, k * 30 + 30) with Zipf-like weights.
std::vector<double> plantedTopic(int k, int vocab) {
    std::vector<double> p(size_t(vocab), 0.0);
    double total = 0;
    for (int j = 0; j < kWordsPerTopic; ++j) {
        p[size_t(k * kWordsPerTopic + j)] = 1.0 / (1.0 + j * 0.2);
        total += p[size_t(k * kWordsPerTopic + j)];
    }
    for (auto& x : p)
        x /= total;
    return p;
}

std::string drawDocument(const std::vector<std::vector<double>>& topics,
                         const std::vector<double>& theta, int length, std::mt19937& rng) {
    std::discrete_distribution<int> pickTopic(theta.begin(), theta.end());
    std::vector<std::discrete_distribution<int>> pickWord;
    for (const auto& t : topics)
        pickWord.emplace_back(t.begin(), t.end());
    std::string doc;
    for (int i = 0; i < length; ++i) {
        const int k = pickTopic(rng);
        doc += word(pickWord[size_t(k)](rng)) + (i % 12 == 11 ? ".\n" : " ");
    }
    return doc;
}

// The best one-to-one matching of fitted to planted topics (all permutations of 5).
double meanMatchedJsd(const TopicModel& m, const std::vector<std::vector<double>>& planted,
                      std::vector<int>* matching = nullptr) {
    const int vocab = int(planted[0].size());
    // Fitted distributions re-indexed to the planted vocabulary.
    std::vector<std::vector<double>> fitted;
    for (int k = 0; k < m.topics(); ++k) {
        const auto p = m.topicWordDistribution(k);
        std::vector<double> q(size_t(vocab), 0.0);
        for (int w = 0; w < vocab; ++w)
            if (int id = m.wordId(word(w)); id >= 0)
                q[size_t(w)] = p[size_t(id)];
        fitted.push_back(q);
    }
    std::vector<int> perm(static_cast<size_t>(kTopics));
    std::iota(perm.begin(), perm.end(), 0);
    double best = 1e9;
    do {
        double sum = 0;
        for (int k = 0; k < kTopics; ++k)
            sum += jensenShannonBits(fitted[size_t(perm[size_t(k)])], planted[size_t(k)]);
        if (sum < best) {
            best = sum;
            if (matching)
                *matching = perm;
        }
    } while (std::next_permutation(perm.begin(), perm.end()));
    return best / kTopics;
}

using baton::test::cli;
using baton::test::CliRun;

} // namespace

class TestTopics : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::vector<std::vector<double>> m_planted;
    std::vector<std::string> m_docs;

    LdaOptions syntheticOptions(int threads) const {
        LdaOptions o;
        o.topics = kTopics;
        o.alpha = 0.1;
        o.beta = 0.01;
        o.iterations = 150;
        o.seed = 3;
        o.chunkWords = 200;
        o.minDocFrequency = 1;
        o.maxDocFrequency = 1.0;
        o.threads = threads;
        return o;
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        const int vocab = kTopics * kWordsPerTopic;
        for (int k = 0; k < kTopics; ++k)
            m_planted.push_back(plantedTopic(k, vocab));
        // 400 documents of 200 words; each mixes one main topic (80%) with another.
        std::mt19937 rng(42);
        for (int d = 0; d < 400; ++d) {
            std::vector<double> theta(size_t(kTopics), 0.0);
            theta[size_t(d % kTopics)] = 0.8;
            theta[size_t((d / kTopics) % kTopics)] += 0.2;
            m_docs.push_back(drawDocument(m_planted, theta, 200, rng));
        }
    }

    void wordTokensAreLowerCasedWords() {
        const auto w =
            wordTokens("It's 1811: \xE2\x80\x9CMr. Darcy\xE2\x80\x9D\xE2\x80\x94said she, "
                       "don\xE2\x80\x99t \xC2\xAB"
                       "caf\xC3\xA9\xC2\xBB rock'n'roll 'tis");
        const std::vector<std::string> expected = {
            "it's", "mr", "darcy", "said", "she", "don't", "caf\xC3\xA9", "rock'n'roll", "tis"};
        QCOMPARE(w.size(), expected.size());
        for (size_t i = 0; i < w.size(); ++i)
            QCOMPARE(QString::fromStdString(w[i]), QString::fromStdString(expected[i]));
        QVERIFY(wordTokens("").empty());
        QVERIFY(wordTokens("1234 -- !!").empty());
    }

    void stopWordsAreBuiltIn() {
        const auto& s = defaultStopWords();
        QVERIFY(s.size() > 150);
        for (const char* w : {"the", "and", "of", "she"})
            QVERIFY2(std::find(s.begin(), s.end(), w) != s.end(), w);
        QVERIFY(std::find(s.begin(), s.end(), "darcy") == s.end());
        for (const auto& w : s)
            QVERIFY(!w.empty() && w[0] != '#');
    }

    void jensenShannon() {
        const std::vector<double> p = {0.5, 0.5, 0, 0}, q = {0, 0, 0.25, 0.75},
                                  r = {0.1, 0.2, 0.3, 0.4};
        QCOMPARE(jensenShannonBits(p, p), 0.0);
        QVERIFY(std::abs(jensenShannonBits(p, q) - 1.0) < 1e-12); // disjoint supports
        QCOMPARE(jensenShannonBits(p, r), jensenShannonBits(r, p));
        const double pr = jensenShannonBits(p, r);
        QVERIFY(pr > 0 && pr < 1);
        // Unnormalised inputs are normalised.
        QVERIFY(std::abs(jensenShannonBits({1, 1, 0, 0}, {2, 4, 6, 8}) - pr) < 1e-12);
        // Hand-computed: p = (1, 0), q = (0.5, 0.5): m = (0.75, 0.25);
        // JSD = 0.5 log2(1 / 0.75) + 0.5 (0.5 log2(0.5 / 0.75) + 0.5 log2(0.5 / 0.25)).
        const double expected =
            0.5 * std::log2(1 / 0.75) + 0.5 * (0.5 * std::log2(0.5 / 0.75) + 0.5 * std::log2(2.0));
        QVERIFY(std::abs(jensenShannonBits({1, 0}, {0.5, 0.5}) - expected) < 1e-12);
        QVERIFY(std::isnan(jensenShannonBits({1}, {0.5, 0.5})));
    }

    void signTest() {
        QVERIFY(std::abs(signTestPValue(10, 0) - 2.0 / 1024) < 1e-12);
        QVERIFY(std::abs(signTestPValue(0, 10) - 2.0 / 1024) < 1e-12);
        QCOMPARE(signTestPValue(5, 5), 1.0);
        QCOMPARE(signTestPValue(0, 0), 1.0);
        // 9 of 10: 2 * (1 + 10) / 1024.
        QVERIFY(std::abs(signTestPValue(9, 1) - 22.0 / 1024) < 1e-12);
        // Large n stays finite and tiny: 600 against 400 of 1000.
        const double p = signTestPValue(600, 400);
        QVERIFY(p > 0 && p < 1e-9);
    }

    void recoversPlantedTopics_data() {
        QTest::addColumn<int>("threads");
        QTest::newRow("1 thread") << 1;
        QTest::newRow("2 threads") << 2;
    }
    void recoversPlantedTopics() {
        QFETCH(int, threads);
        int sweeps = 0;
        auto m = fitLda(m_docs, syntheticOptions(threads), [&](const LdaProgress& p) {
            ++sweeps;
            return p.iteration <= p.iterations;
        });
        BATON_VERIFY_OK(m);
        QCOMPARE(sweeps, 150);
        QCOMPARE(m->topics(), kTopics);
        QCOMPARE(m->vocabularySize(), kTopics * kWordsPerTopic);
        std::vector<int> match;
        const double jsd = meanMatchedJsd(*m, m_planted, &match);
        QVERIFY2(jsd < 0.05, qPrintable(QString("mean JSD to the planted topics %1").arg(jsd)));
        // A fresh document from planted topic 2 alone is inferred as mostly that topic.
        std::mt19937 rng(7);
        std::vector<double> only2(size_t(kTopics), 0.0);
        only2[2] = 1.0;
        const auto inf = m->infer(drawDocument(m_planted, only2, 120, rng), 100, 5);
        QCOMPARE(inf.knownWords, 120);
        QVERIFY2(
            inf.theta[size_t(match[2])] > 0.8,
            qPrintable(QString("mass on the planted topic %1").arg(inf.theta[size_t(match[2])])));
        QVERIFY(std::abs(std::accumulate(inf.theta.begin(), inf.theta.end(), 0.0) - 1.0) < 1e-9);
        // Inference is deterministic for a seed; unknown words give the uniform prior.
        const auto again =
            m->infer(drawDocument(m_planted, only2, 120, rng = std::mt19937(7)), 100, 5);
        QCOMPARE(again.theta, inf.theta);
        const auto none = m->infer("zzz qqq 1234", 50, 1);
        QCOMPARE(none.knownWords, 0);
        QCOMPARE(none.theta[0], 1.0 / kTopics);
    }

    void fittingIsDeterministicForASeed() {
        auto a = fitLda(m_docs, syntheticOptions(2));
        auto b = fitLda(m_docs, syntheticOptions(2));
        QVERIFY(a.ok() && b.ok());
        QVERIFY(a->topicWordCounts() == b->topicWordCounts());
    }

    void saveAndLoad() {
        auto m = fitLda(m_docs, syntheticOptions(1));
        QVERIFY(m.ok());
        const QString path = m_tmp.filePath("topics.json");
        QVERIFY(m->save(path.toStdString()).ok());
        auto back = TopicModel::load(path.toStdString());
        BATON_VERIFY_OK(back);
        QCOMPARE(back->topics(), m->topics());
        QVERIFY(back->vocabulary() == m->vocabulary());
        QVERIFY(back->topicWordCounts() == m->topicWordCounts());
        QCOMPARE(back->topWords(1, 5), m->topWords(1, 5));
        // Damaged files are refused with a clear error.
        const QByteArray good = baton::test::readFile(path);
        const QString bad = m_tmp.filePath("bad.json");
        QVERIFY(baton::test::writeFile(bad, good.left(good.size() / 2)));
        auto truncated = TopicModel::load(bad.toStdString());
        QVERIFY(!truncated.ok());
        QCOMPARE(truncated.error().code, ErrorCode::InvalidJson);
        QByteArray lying = good;
        lying.replace("\"topics\":5", "\"topics\":6");
        QVERIFY(baton::test::writeFile(bad, lying));
        auto inconsistent = TopicModel::load(bad.toStdString());
        QVERIFY(!inconsistent.ok());
        QCOMPARE(inconsistent.error().code, ErrorCode::BadHeader);
        QByteArray newer = good;
        newer.replace("\"version\":1", "\"version\":7");
        QVERIFY(baton::test::writeFile(bad, newer));
        auto future = TopicModel::load(bad.toStdString());
        QVERIFY(!future.ok());
        QCOMPARE(future.error().code, ErrorCode::Unsupported);
        QVERIFY(baton::test::writeFile(bad, "{\"format\": \"something else\"}"));
        QCOMPARE(TopicModel::load(bad.toStdString()).error().code, ErrorCode::BadHeader);
    }

    void badSettingsAndCancel() {
        LdaOptions o = syntheticOptions(1);
        o.topics = 0;
        QCOMPARE(fitLda(m_docs, o).error().code, ErrorCode::InvalidArgument);
        o = syntheticOptions(1);
        o.minDocFrequency = 100000; // nothing survives
        auto empty = fitLda(m_docs, o);
        QVERIFY(!empty.ok());
        QVERIFY(QString::fromStdString(empty.error().message).contains("no words"));
        auto cancelled = fitLda(m_docs, syntheticOptions(1),
                                [](const LdaProgress& p) { return p.iteration < 3; });
        QCOMPARE(cancelled.error().code, ErrorCode::Cancelled);
        CancelToken token;
        token.cancel();
        QCOMPARE(fitLda(m_docs, syntheticOptions(1), {}, token).error().code, ErrorCode::Cancelled);
    }

    void whatTheStateCarries() {
        // The fixture plus a random recurrence module; windows of 16, disjoint.
        const QString rec = m_tmp.filePath("recurrent-states");
        RecurrenceConfig rc;
        rc.window = 16;
        QVERIFY(baton::test::writeRecurrentFixture(rec, rc));
        auto model = Model::load(rec.toStdString());
        QVERIFY(model.ok());
        std::vector<int32_t> ids;
        for (int i = 0; i < 50; ++i)
            ids.push_back(int32_t((i * 37 + 11) % 1000));
        WindowSettings w{16, 0};
        auto r = readStates(**model, ids, w, 5);
        BATON_VERIFY_OK(r);
        QCOMPARE(r->size(), size_t(3)); // windows 1, 2 and 3 receive a state
        for (size_t i = 0; i < r->size(); ++i) {
            const StateReading& s = (*r)[i];
            QCOMPARE(s.window, int64_t(i + 1));
            QCOMPARE(s.firstToken, int64_t(16 * (i + 1)));
            QCOMPARE(s.ids.size(), size_t(5));
            for (size_t j = 1; j < s.probs.size(); ++j)
                QVERIFY(s.probs[j] <= s.probs[j - 1]);
            QVERIFY(s.probs[0] > 0 && s.probs[0] <= 1);
        }
        // The state window 1 receives comes from window 0 only: changing a later token
        // leaves it, changing one in window 0 changes it.
        auto later = ids;
        later[20] = 5;
        auto r2 = readStates(**model, later, w, 5);
        QCOMPARE((*r2)[0].ids, (*r)[0].ids);
        QVERIFY((*r2)[1].ids != (*r)[1].ids || (*r2)[1].probs != (*r)[1].probs);
        auto earlier = ids;
        earlier[3] = 5;
        auto r3 = readStates(**model, earlier, w, 5);
        QVERIFY((*r3)[0].ids != (*r)[0].ids || (*r3)[0].probs != (*r)[0].probs);
        // A baseline has no state; bad settings are refused.
        auto base = Model::load(baton::test::fixture());
        QVERIFY(base.ok());
        QCOMPARE(readStates(**base, ids, w, 5).error().code, ErrorCode::InvalidArgument);
        QCOMPARE(readStates(**model, ids, WindowSettings{16, 16}, 5).error().code,
                 ErrorCode::InvalidArgument);

        // The topics view: per-window topics and states, and the context against the
        // continuation.
        const QString books = baton::test::sharedPath("corpus/books");
        const QByteArray emma = baton::test::readFile(books + "/austen-emma.txt");
        QVERIFY(emma.size() > 200000);
        LdaOptions o;
        o.topics = 4;
        o.iterations = 20;
        o.chunkWords = 300;
        o.minDocFrequency = 2;
        auto fitted = fitLda({emma.left(120000).toStdString()}, o);
        QVERIFY(fitted.ok());
        const std::string topicsPath = m_tmp.filePath("view-topics.json").toStdString();
        QVERIFY(fitted->save(topicsPath).ok());
        TopicsInspectRequest req;
        req.text = emma.mid(130000, 1500).toStdString();
        req.windows = w;
        req.topicModelPath = topicsPath;
        req.continuationByte = 1000;
        std::vector<double> fractions;
        auto inspected = inspectTopics(
            **model, req, {}, [&](double f, const std::string&) { fractions.push_back(f); });
        BATON_VERIFY_OK(inspected);
        QVERIFY(!fractions.empty());
        QVERIFY(std::is_sorted(fractions.begin(), fractions.end()));
        QVERIFY(fractions.back() <= 1.0);
        const TopicsInspection& view = *inspected;
        QCOMPARE(view.topics, 4);
        QCOMPARE(view.topWords.size(), size_t(4));
        QCOMPARE(view.topWords[0].size(), size_t(8));
        QVERIFY(view.recurrent);
        QVERIFY(view.windows.size() > 10);
        for (const WindowTopics& wt : view.windows) {
            QCOMPARE(wt.theta.size(), size_t(4));
            QVERIFY(std::abs(std::accumulate(wt.theta.begin(), wt.theta.end(), 0.0) - 1) < 1e-6);
            QCOMPARE(wt.stateTokens.size(), wt.window == 0 ? size_t(0) : size_t(8));
            QCOMPARE(wt.firstToken, 16 * wt.window);
        }
        QCOMPARE(view.windows[0].firstByte, int64_t(0));
        QVERIFY(view.windows[1].firstByte > 0);
        QCOMPARE(view.context.size(), size_t(4));
        QVERIFY(view.jsdBits >= 0 && view.jsdBits <= 1);
        QCOMPARE(view.jsdBits, jensenShannonBits(view.context, view.continuation));
        // A topic model file that is not one is reported.
        req.topicModelPath = m_tmp.filePath("missing.json").toStdString();
        QVERIFY(!inspectTopics(**model, req).ok());
        // A cancelled inspection stops with Cancelled.
        req.topicModelPath = topicsPath;
        CancelToken cancelled;
        cancelled.cancel();
        QCOMPARE(inspectTopics(**model, req, cancelled).error().code, ErrorCode::Cancelled);
    }

    // topics fit reads EPUB books in a corpus folder (their text, not their markup).
    void cliFitReadsEpub() {
        QTemporaryDir dir;
        QVERIFY(baton::test::epub::writeZip(dir.filePath("tern.epub").toStdString(),
                                            baton::test::epub::goodBook()));
        const QString model = m_tmp.filePath("tern-topics.json");
        CliRun fit = cli({"--db", m_tmp.filePath("epub.db"), "topics", "fit", "--corpus",
                          dir.path(), "--topics", "2", "--iterations", "5", "--chunk-words", "5",
                          "--min-df", "1", "--out", model});
        QVERIFY2(fit.exitCode == 0, fit.err.constData());
        CliRun show = cli({"topics", "show", model, "--words", "30", "--json"});
        QVERIFY2(show.exitCode == 0, show.err.constData());
        QVERIFY(show.out.contains("\"hoist\"") || show.out.contains("\"sail\""));
        QVERIFY(!show.out.contains("\"alert\"") && !show.out.contains("\"html\""));
    }

    void cliFitShowInferAndExperiment() {
        const QString books = baton::test::sharedPath("corpus/books");
        QVERIFY2(QDir(books).exists(), qPrintable(baton::test::missingMessage(books)));
        const QByteArray emma = baton::test::readFile(books + "/austen-emma.txt");
        QVERIFY(emma.size() > 200000);
        const QString train = m_tmp.filePath("train.txt"), heldOut = m_tmp.filePath("held.txt");
        QVERIFY(baton::test::writeFile(train, emma.left(150000)));
        QVERIFY(baton::test::writeFile(heldOut, emma.mid(150000, 20000)));
        const QString model = m_tmp.filePath("emma-topics.json");
        const QString db = m_tmp.filePath("baton.db");
        CliRun fit =
            cli({"--db", db, "topics", "fit", "--corpus", train, "--topics", "4", "--iterations",
                 "30", "--chunk-words", "300", "--min-df", "2", "--out", model, "--name", "Emma"});
        QVERIFY2(fit.exitCode == 0, fit.err.constData());
        QVERIFY(fit.err.contains("registered as topic model 1"));
        {
            auto opened = baton::storage::Database::open(db.toStdString());
            QVERIFY(opened.ok());
            auto list = (*opened)->topics().list();
            QCOMPARE(list->size(), size_t(1));
            QCOMPARE(QString::fromStdString(list->front().name), QString("Emma"));
            QCOMPARE(list->front().topics, 4);
            QVERIFY(QString::fromStdString(list->front().path).endsWith("emma-topics.json"));
        }
        CliRun show = cli({"topics", "show", model, "--words", "5", "--json"});
        QVERIFY2(show.exitCode == 0, show.err.constData());
        const QJsonArray topics = QJsonDocument::fromJson(show.out).array();
        QCOMPARE(topics.size(), 4);
        QCOMPARE(topics[0].toObject()["words"].toArray().size(), 5);
        CliRun infer = cli({"topics", "infer", model, heldOut, "--json"});
        QVERIFY2(infer.exitCode == 0, infer.err.constData());
        const QJsonObject inf = QJsonDocument::fromJson(infer.out).object();
        QVERIFY(inf["known_words"].toInt() > 100);
        QCOMPARE(inf["theta"].toArray().size(), 4);

        // The experiment, with the fixture as baseline and the fixture plus a random
        // recurrence module as the recurrent model (the numbers mean nothing here; the
        // test checks that the experiment runs end to end and reports what it must).
        const QString rec = m_tmp.filePath("recurrent");
        RecurrenceConfig rc;
        rc.window = 32;
        QVERIFY(baton::test::writeRecurrentFixture(rec, rc));
        CliRun exp = cli({"topics", "experiment", "--topics-model", model, "--recurrent", rec,
                          "--baseline", baton::test::fixtureDir(), "--contexts", "6",
                          "--continuation-tokens", "10", "--json", heldOut});
        QVERIFY2(exp.exitCode == 0, exp.err.constData());
        const QJsonObject r = QJsonDocument::fromJson(exp.out).object();
        QCOMPARE(r["contexts"].toInt(), 6);
        QCOMPARE(r["window"].toInt(), 32); // the recurrent model's T
        const QJsonArray rows = r["rows"].toArray();
        QCOMPARE(rows.size(), 4);
        QCOMPARE(rows[3].toObject()["condition"].toString(), QString("recurrent_far_state"));
        for (const auto& row : rows) {
            const double jsd = row.toObject()["mean_jsd"].toDouble(-1);
            QVERIFY(jsd >= 0 && jsd <= 1);
        }
        const double share = r["recurrent_lower_share"].toDouble(-1);
        QVERIFY(share >= 0 && share <= 1);
        QCOMPARE(r["recurrent_lower"].toInt() + r["recurrent_higher"].toInt() + r["ties"].toInt(),
                 6);
        const double p = r["sign_test_p"].toDouble(-1);
        QVERIFY(p > 0 && p <= 1);
        const QJsonObject far = r["against_far_state"].toObject();
        QCOMPARE(far["recurrent_lower"].toInt() + far["recurrent_higher"].toInt() +
                     far["ties"].toInt(),
                 6);
        QVERIFY(far["sign_test_p"].toDouble(-1) > 0 && far["sign_test_p"].toDouble(-1) <= 1);
        // Errors: a baseline passed as the recurrent model; a missing topic model.
        CliRun notRec =
            cli({"topics", "experiment", "--topics-model", model, "--recurrent",
                 baton::test::fixtureDir(), "--baseline", baton::test::fixtureDir(), heldOut});
        QCOMPARE(notRec.exitCode, 1);
        QVERIFY(notRec.err.contains("not a recurrent model"));
        CliRun noModel = cli({"topics", "show", m_tmp.filePath("nope.json")});
        QCOMPARE(noModel.exitCode, 1);
    }
};

QTEST_GUILESS_MAIN(TestTopics)
#include "tst_topics.moc"
