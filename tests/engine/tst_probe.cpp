// The memory probe: episodes (the two sets are disjoint), their placement in the
// windows, mixing them into training sequences, and the probe on tiny models.
#include "test_support.h"
#include "tiny_model.h"
#include "verify_ok.h"

#include "model/model_impl.h"
#include "probe/episodes.h"

#include <baton/engine/model.h>
#include <baton/engine/probe.h>
#include <baton/engine/training.h>

#include <QTemporaryDir>
#include <QtTest>

#include <set>

using namespace baton::engine;

namespace {

bool contains(const std::vector<int32_t>& stream, int64_t at, const std::vector<int32_t>& part) {
    if (at < 0 || at + int64_t(part.size()) > int64_t(stream.size()))
        return false;
    return std::equal(part.begin(), part.end(), stream.begin() + at);
}

std::set<std::string> words(const std::string& text) {
    std::set<std::string> out;
    std::string w;
    for (char c : text + " ") {
        if (std::isalpha(static_cast<unsigned char>(c))) {
            w += c;
        } else if (!w.empty()) {
            out.insert(w);
            w.clear();
        }
    }
    return out;
}

} // namespace

class TestProbe : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::shared_ptr<Model> m_baseline, m_recurrent;
    std::shared_ptr<const Tokenizer> m_tokenizer;
    std::string m_book;

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        const QString book = baton::test::sharedPath("corpus/books/austen-pride-and-prejudice.txt");
        QVERIFY2(QFile::exists(book), qPrintable(baton::test::missingMessage(book)));
        m_book = baton::test::readFile(book).mid(0, 60000).toStdString();
        auto base = Model::load(baton::test::fixture());
        QVERIFY(base.ok());
        m_baseline = *base;
        m_tokenizer = m_baseline->tokenizer();
        const QString dir = m_tmp.filePath("recurrent");
        RecurrenceConfig rec;
        rec.window = 32;
        QVERIFY(baton::test::writeRecurrentFixture(dir, rec));
        auto r = Model::load(dir.toStdString());
        QVERIFY(r.ok());
        m_recurrent = *r;
    }

    void episodesAreWellFormedAndTheSetsDisjoint() {
        Rng rng(1);
        std::set<std::string> probeWords, trainingWords, kinds;
        for (int i = 0; i < 400; ++i) {
            for (EpisodeSet set : {EpisodeSet::Probe, EpisodeSet::Training}) {
                const Episode e = makeEpisode(set, rng);
                kinds.insert(e.kind);
                QCOMPARE(int(e.alternatives.size()), kEpisodeAlternatives);
                QVERIFY(e.answer >= 0 && e.answer < kEpisodeAlternatives);
                std::set<std::string> distinct(e.alternatives.begin(), e.alternatives.end());
                QCOMPARE(int(distinct.size()), kEpisodeAlternatives);
                const std::string answer = e.alternatives[size_t(e.answer)];
                QCOMPARE(answer[0], ' ');
                // The fact holds the answer; the question does not give it away.
                QVERIFY(e.fact.find(answer.substr(1)) != std::string::npos);
                QVERIFY(e.question.find(answer.substr(1)) == std::string::npos);
                auto& into = set == EpisodeSet::Probe ? probeWords : trainingWords;
                for (const auto& w : words(e.fact + " " + e.question))
                    into.insert(w);
                if (e.kind == "name") // the names asked for belong to the set
                    for (const auto& a : e.alternatives)
                        into.insert(a.substr(1));
            }
        }
        QCOMPARE(int(kinds.size()), 3);
        // Names and template words of the probe that training never shows (answers
        // such as colours and places are shared: they are what is asked for).
        for (const char* held : {"Crane", "Fenwick", "hid", "hidden", "wore", "called", "visitor"})
            QVERIFY2(probeWords.count(held) && !trainingWords.count(held), held);
        for (const char* trained : {"Pratt", "left", "bought", "arrived", "servant"})
            QVERIFY2(trainingWords.count(trained) && !probeWords.count(trained), trained);
    }

    void placementRespectsTheWindows() {
        const auto ends = sentenceEndTokens(*m_tokenizer);
        const auto book = m_tokenizer->encode(m_book);
        Rng rng(3);
        const std::vector<int32_t> fact = {101, 102, 103, 104, 105};
        const std::vector<int32_t> question = {201, 202, 203};
        for (WindowSettings w :
             {WindowSettings{16, 0}, WindowSettings{16, 4}, WindowSettings{40, 8}})
            for (int d : {0, 1, 2, 4})
                for (int round = 0; round < 20; ++round) {
                    const int64_t T = w.window, s = T - w.overlap, room = 2;
                    const int64_t start = int64_t(rng.next() % 5000);
                    std::vector<int32_t> stream(book.begin() + start,
                                                book.begin() + start + s * (d + 1) + T);
                    PlacedEpisode p;
                    QVERIFY(
                        placeEpisode(stream, fact, question, room, 1, d, w, ends, true, rng, p));
                    QVERIFY(contains(stream, p.factStart, fact));
                    QVERIFY(contains(stream, p.questionStart, question));
                    QCOMPARE(int64_t(stream.size()), p.questionEnd); // cut after the question
                    // The fact lies in window 1 and ends before window 2 starts.
                    QVERIFY(p.factStart >= s && p.factEnd <= 2 * s);
                    // The question lies in window 1 + d, with room for the answer, in
                    // the part the window before it does not see.
                    const int64_t b = 1 + d;
                    QVERIFY(p.questionStart >= b * s + w.overlap);
                    QVERIFY(p.questionEnd + room <= b * s + T);
                    if (d == 0)
                        QVERIFY(p.questionStart >= p.factEnd);
                    else // the question's window cannot see the fact
                        QVERIFY(p.factEnd <= b * s);
                }
        // A window too small for fact and question is refused.
        std::vector<int32_t> stream(book.begin(), book.begin() + 100);
        PlacedEpisode p;
        QVERIFY(!placeEpisode(stream, std::vector<int32_t>(10, 1), std::vector<int32_t>(10, 2), 2,
                              1, 0, {12, 0}, ends, true, rng, p));
    }

    void trainingSequencesKeepTheirLength() {
        const auto ends = sentenceEndTokens(*m_tokenizer);
        const auto book = m_tokenizer->encode(m_book);
        const WindowSettings w{32, 4};
        const int W = 10;
        const std::vector<int32_t> original(book.begin(), book.begin() + W * 28 + 4);
        auto once = original, twice = original;
        Rng a(7), b(7);
        mixEpisodes(once, 3, W, w, *m_tokenizer, ends, a);
        mixEpisodes(twice, 3, W, w, *m_tokenizer, ends, b);
        QCOMPARE(once.size(), original.size());
        QCOMPARE(once, twice); // the same seed mixes the same episodes
        QVERIFY(once != original);
        // Three questions, each followed by its answer and a full stop.
        const std::string text = m_tokenizer->decode(once);
        int asked = 0;
        for (const char* q : {"The colour of", "had left the", "The name of the"})
            for (size_t at = text.find(q); at != std::string::npos; at = text.find(q, at + 1))
                ++asked;
        QVERIFY2(asked >= 2, text.c_str()); // the last may be cut off at the end
    }

    void probeRunsAndTheStateIsTheOnlyWay() {
        ProbeOptions o;
        o.windows = {32, 0};
        o.distances = {0, 1, 2};
        o.episodes = 6;
        o.states = {StateSource::On, StateSource::Off, StateSource::Mean, StateSource::Shuffled};
        auto r = runProbe(*m_recurrent, {m_book}, o);
        BATON_VERIFY_OK(r);
        QVERIFY(r->recurrent);
        QCOMPARE(r->cells.size(), size_t(3 * 4));
        QCOMPARE(r->chance, 1.0 / 8);
        for (const auto& c : r->cells) {
            QCOMPARE(c.episodes, 6);
            QVERIFY(c.accuracy() >= 0 && c.accuracy() <= 1);
            QVERIFY(c.meanShare > 0 && c.meanShare < 1);
            QVERIFY(c.meanLogProb < 0);
        }
        // The baseline gets the same episodes (same tokenizer, same seed): the recurrent
        // model with its state off computes exactly what it computes.
        auto b = runProbe(*m_baseline, {m_book}, o);
        QVERIFY(b.ok());
        QCOMPARE(b->cells.size(), size_t(3));
        for (const auto& c : b->cells) {
            QCOMPARE(c.state, StateSource::Off);
            for (const auto& rc : r->cells)
                if (rc.distance == c.distance && rc.state == StateSource::Off)
                    QVERIFY(std::abs(rc.meanLogProb - c.meanLogProb) < 1e-4);
        }
        // At d = 0 every state is seen with the fact in the window; the true state changes
        // the answers' probabilities at d >= 1.
        auto cell = [&](int d, StateSource s) {
            for (const auto& c : r->cells)
                if (c.distance == d && c.state == s)
                    return c;
            return ProbeCell{};
        };
        QVERIFY(std::abs(cell(1, StateSource::On).meanLogProb -
                         cell(1, StateSource::Off).meanLogProb) > 1e-4);
        // Deterministic for a seed.
        auto again = runProbe(*m_recurrent, {m_book}, o);
        QCOMPARE(again->cells.front().meanLogProb, r->cells.front().meanLogProb);
        // Books too short for the windows are refused with a reason.
        auto tooShort = runProbe(*m_baseline, {m_book.substr(0, 200)}, o);
        QVERIFY(!tooShort.ok());
        QVERIFY(tooShort.error().message.find("too short") != std::string::npos);
    }

    void trainingWithEpisodesRuns() {
        const QString corpus = m_tmp.filePath("corpus.txt");
        QVERIFY(baton::test::writeFile(corpus, QByteArray::fromStdString(m_book.substr(0, 30000))));
        TrainConfig c;
        c.outDir = m_tmp.filePath("episodes-run").toStdString();
        c.baseModel = baton::test::fixture();
        c.mode = TrainMode::Recurrent;
        c.corpus = {corpus.toStdString()};
        c.validationFraction = 0;
        c.window = 32;
        c.bpttWindows = 6;
        c.batchSize = 1;
        c.steps = 2;
        c.episodesPerSequence = 2;
        c.validateEveryTokens = 0;
        auto r = train(c);
        BATON_VERIFY_OK(r);
        QCOMPARE(r->steps, int64_t(2));
        c.outDir = m_tmp.filePath("too-many").toStdString();
        c.episodesPerSequence = 7;
        QVERIFY(!train(c).ok());
    }
};

QTEST_GUILESS_MAIN(TestProbe)
#include "tst_probe.moc"
