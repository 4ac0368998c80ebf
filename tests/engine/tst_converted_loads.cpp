// Loading with converted weights kept on disk (LoadOptions::mapWeights,
// keepConvertedWeightsIn): the second load of a model in a format maps what the first
// converted and computes the very same logits; nothing is kept where it could not be
// found again (no remembered identity) or where the user asked for copies; a damaged
// kept file is converted again, and a folder that cannot be written fails nothing; cancelling while
// the file is written cancels the load and leaves nothing.
#include "test_support.h"
#include "verify_ok.h"

#include "model/converted_weights.h"
#include "model/identity_memo.h"

#include <baton/engine/model.h>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>

using namespace baton::engine;

class TestConvertedLoads : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_kept;
    const std::vector<int32_t> m_ids{464, 3290, 373, 257, 1310, 11, 290, 340};

    struct Loaded {
        std::vector<float> logits;
        int64_t keptBytes = -1;
        std::string identity;
    };
    Loaded load(WeightFormat format, bool map = true) {
        LoadOptions o;
        o.weights = format;
        o.mapWeights = map;
        auto model = Model::load(baton::test::fixture(), o);
        if (!model.ok()) {
            qWarning("%s", model.error().message.c_str());
            return {};
        }
        auto logits = (*model)->windowLogits(m_ids);
        return {logits.ok() ? *logits : std::vector<float>(), (*model)->info().keptBytes,
                (*model)->info().identity};
    }
    QStringList keptFiles() const { return QDir(m_kept).entryList(QDir::Files); }

private Q_SLOTS:
    void init() {
        m_kept = m_dir.filePath("converted");
        QDir(m_kept).removeRecursively();
        QDir(m_dir.filePath("ids")).removeRecursively();
        setIdentityMemoFolder(m_dir.filePath("ids").toStdString(), 0);
        keepConvertedWeightsIn(m_kept.toStdString());
    }
    void cleanup() {
        setIdentityMemoFolder("");
        keepConvertedWeightsIn("");
    }

    void theNextLoadMapsWhatThisOneConverted_data() {
        QTest::addColumn<QString>("format");
        for (const char* f : {"f16", "bf16", "int8", "q4"}) // from float32 weights
            QTest::newRow(f) << f;
    }
    void theNextLoadMapsWhatThisOneConverted() {
        QFETCH(QString, format);
        const WeightFormat f = *parseWeightFormat(format.toStdString());
        const Loaded first = load(f);
        QVERIFY(!first.logits.empty());
        QCOMPARE(first.keptBytes, int64_t(0));
        QCOMPARE(keptFiles().size(), 1);

        const Loaded second = load(f);
        QVERIFY(second.keptBytes > 0);
        QCOMPARE(second.identity, first.identity);
        QCOMPARE(second.logits.size(), first.logits.size());
        QVERIFY(std::memcmp(second.logits.data(), first.logits.data(), 4 * first.logits.size()) ==
                0);

        const Loaded copied = load(f, false); // --no-map: the user asked for copies
        QCOMPARE(copied.keptBytes, int64_t(0));
        QVERIFY(std::memcmp(copied.logits.data(), first.logits.data(), 4 * first.logits.size()) ==
                0);
        QCOMPARE(load(WeightFormat::F32).keptBytes, int64_t(0)); // nothing to convert
        QCOMPARE(keptFiles().size(), 1);
    }

    // Without remembered identities a kept file could never be found again: none is
    // written. With --no-map, none either.
    void nothingIsKeptThatCouldNotBeUsed() {
        setIdentityMemoFolder("");
        QCOMPARE(load(WeightFormat::Int8).keptBytes, int64_t(0));
        QCOMPARE(load(WeightFormat::Int8).keptBytes, int64_t(0));
        QCOMPARE(keptFiles(), QStringList());
        setIdentityMemoFolder(m_dir.filePath("ids").toStdString(), 0);
        QCOMPARE(load(WeightFormat::Int8, false).keptBytes, int64_t(0));
        QCOMPARE(keptFiles(), QStringList());
    }

    // A folder that cannot be written costs the keeping only: the load succeeds.
    void anUnwritableFolderOnlyCostsTheKeeping() {
        const QString blocker = m_dir.filePath("a-file");
        QVERIFY(baton::test::writeFile(blocker, "not a folder"));
        keepConvertedWeightsIn((blocker + "/converted").toStdString());
        const Loaded first = load(WeightFormat::Int8), second = load(WeightFormat::Int8);
        QVERIFY(!first.logits.empty());
        QCOMPARE(second.keptBytes, int64_t(0));
        QVERIFY(std::memcmp(second.logits.data(), first.logits.data(), 4 * first.logits.size()) ==
                0);
    }

    void aDamagedKeptFileIsConvertedAgain() {
        const Loaded first = load(WeightFormat::Q4);
        QCOMPARE(keptFiles().size(), 1);
        const QString path = m_kept + "/" + keptFiles()[0];
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadWrite));
        QVERIFY(file.resize(file.size() / 2));
        file.close();
        const Loaded again = load(WeightFormat::Q4);
        QCOMPARE(again.keptBytes, int64_t(0));
        QVERIFY(std::memcmp(again.logits.data(), first.logits.data(), 4 * first.logits.size()) ==
                0);
        const Loaded third = load(WeightFormat::Q4); // kept anew by the one before
        QVERIFY(third.keptBytes > 0);
        QVERIFY(std::memcmp(third.logits.data(), first.logits.data(), 4 * first.logits.size()) ==
                0);
    }

    // The write is part of the load: its progress runs to 1 and cancelling it cancels
    // the load, leaving no file (not even a temporary one).
    void cancellingTheWriteCancelsTheLoad() {
        LoadOptions o;
        o.weights = WeightFormat::Int8;
        double last = 0;
        bool monotonic = true;
        o.progress = [&](double f) {
            monotonic = monotonic && f >= last;
            last = f;
            return f < 1.0;
        };
        auto cancelled = Model::load(baton::test::fixture(), o);
        QVERIFY(!cancelled.ok());
        QCOMPARE(cancelled.error().code, ErrorCode::Cancelled);
        QVERIFY(monotonic);
        QCOMPARE(last, 1.0);
        QCOMPARE(keptFiles(), QStringList());

        o.progress = {};
        BATON_VERIFY_OK(Model::load(baton::test::fixture(), o));
        QCOMPARE(keptFiles().size(), 1);
    }
};

QTEST_GUILESS_MAIN(TestConvertedLoads)
#include "tst_converted_loads.moc"
