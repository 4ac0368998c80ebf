// Converted weights kept on disk (model/converted_weights.h): mapped back with the very
// bits that were kept, in every format; any file that does not qualify is removed, never
// used; the folder stays under its cap by removing the least recently used; a cancelled
// write and a dead process's temporary file leave nothing behind.
#include "test_support.h"

#include "kernels/q4_blocks.h"
#include "kernels/weight_matrix.h"
#include "model/converted_weights.h"
#include "model/safetensors.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <cstring>
#include <random>
#include <sys/wait.h>
#include <unistd.h>

using namespace baton::engine;

namespace {

const std::string kModelA = "0123456789abcdef", kModelB = "fedcba9876543210",
                  kModelC = "00000000deadbeef";
// Odd shapes: a row shorter than a q4 group, a ragged last block, several groups.
const std::vector<ConvertedShape> kShapes = {{"h.0.attn.c_attn.weight", 7, 70},
                                             {"wte.weight", 33, 1056 + 24}};

struct Matrices {
    std::vector<cpu::PackedMatrix> packed;
    std::vector<std::pair<std::string, const cpu::PackedMatrix*>> named() const {
        std::vector<std::pair<std::string, const cpu::PackedMatrix*>> out;
        for (size_t i = 0; i < packed.size(); ++i)
            out.emplace_back(kShapes[i].name, &packed[i]);
        return out;
    }
};

Matrices randomMatrices(WeightFormat format, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.f, 0.5f);
    Matrices m;
    for (const ConvertedShape& s : kShapes) {
        std::vector<float> w(size_t(s.rows * s.cols));
        for (float& x : w)
            x = dist(rng);
        m.packed.push_back(cpu::PackedMatrix::pack(w.data(), s.rows, s.cols, format));
    }
    return m;
}

// Whether two matrices hold the same bytes (weights and scales).
bool sameBits(const cpu::MatrixView& a, const cpu::MatrixView& b) {
    if (a.format != b.format || a.rows != b.rows || a.cols != b.cols || a.transposed)
        return false;
    const size_t nb = size_t(a.rows * a.blocksPerRow());
    switch (a.format) {
    case WeightFormat::Int8:
        return std::memcmp(a.data, b.data, size_t(a.rows * a.cols)) == 0 &&
               std::memcmp(a.scales, b.scales, 4 * nb) == 0;
    case WeightFormat::Q4:
        return std::memcmp(a.data, b.data, size_t(a.rows) * cpu::q4RowBytes(a.cols)) == 0 &&
               std::memcmp(a.q4Scales, b.q4Scales, 2 * nb) == 0;
    default:
        return std::memcmp(a.data, b.data, cpu::weightBytes(a.format) * size_t(a.rows * a.cols)) ==
               0;
    }
}

QStringList keptFiles(const QString& folder) {
    return QDir(folder).entryList(QDir::Files, QDir::Name);
}

QString fileOf(const std::string& identity, WeightFormat format) {
    return QString::fromStdString(identity + "-" + weightFormatName(format) + ".safetensors");
}

} // namespace

class TestConvertedWeights : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_folder;

    void keep(const std::string& identity, WeightFormat format, unsigned seed = 1) {
        const Matrices m = randomMatrices(format, seed);
        auto r = keepConvertedWeights(identity, "/models/m", format, m.named());
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    }
    qint64 fileBytes(WeightFormat format) {
        keep(kModelC, format);
        const QString path = m_folder + "/" + fileOf(kModelC, format);
        const qint64 n = QFileInfo(path).size();
        QFile::remove(path);
        return n;
    }

private Q_SLOTS:
    void init() {
        m_folder = m_dir.filePath("converted");
        QDir(m_folder).removeRecursively();
        setConvertedWeightsFolder(m_folder.toStdString(), uint64_t(1) << 30);
    }
    void cleanup() { setConvertedWeightsFolder("", 0); }

    void keptWeightsMapBackBitForBit_data() {
        QTest::addColumn<QString>("format");
        for (const char* f : {"f16", "bf16", "int8", "q4"})
            QTest::newRow(f) << f;
    }
    void keptWeightsMapBackBitForBit() {
        QFETCH(QString, format);
        const WeightFormat f = *parseWeightFormat(format.toStdString());
        const Matrices m = randomMatrices(f, 7);
        auto r = keepConvertedWeights(kModelA, "/models/a", f, m.named());
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE(keptFiles(m_folder), QStringList{fileOf(kModelA, f)});
        QVERIFY(QFileInfo(m_folder + "/" + fileOf(kModelA, f)).size() >=
                qint64(convertedBytes(f, kShapes)));

        auto kept = ConvertedWeights::open(kModelA, f, kShapes);
        QVERIFY(kept.has_value());
        for (size_t i = 0; i < kShapes.size(); ++i) {
            const cpu::PackedMatrix mapped = kept->matrix(kShapes[i].name);
            QVERIFY2(sameBits(mapped.view(), m.packed[i].view()), kShapes[i].name.c_str());
            QCOMPARE(mapped.view().bytes(), m.packed[i].view().bytes());
        }
        // Other models and formats are not this file.
        QVERIFY(!ConvertedWeights::open(kModelB, f, kShapes).has_value());
        const WeightFormat other = f == WeightFormat::Q4 ? WeightFormat::Int8 : WeightFormat::Q4;
        QVERIFY(!ConvertedWeights::open(kModelA, other, kShapes).has_value());
        QCOMPARE(keptFiles(m_folder), QStringList{fileOf(kModelA, f)});
    }

    void nothingIsKeptWithoutAFolder() {
        setConvertedWeightsFolder("", 0);
        const Matrices m = randomMatrices(WeightFormat::Int8, 1);
        QVERIFY(!keepConvertedWeights(kModelA, "/models/a", WeightFormat::Int8, m.named()).ok());
        QVERIFY(!ConvertedWeights::open(kModelA, WeightFormat::Int8, kShapes).has_value());
        QVERIFY(!QDir(m_folder).exists());
    }

    // Each way a file can fail to qualify: it is not used, and it is removed.
    void unusableFilesAreRemoved_data() {
        QTest::addColumn<QString>("damage");
        for (const char* d : {"truncated", "garbage", "empty", "renamed", "layout", "misaligned",
                              "missing matrix", "other shape"})
            QTest::newRow(d) << d;
    }
    void unusableFilesAreRemoved() {
        QFETCH(QString, damage);
        const WeightFormat f = WeightFormat::Int8;
        keep(kModelA, f);
        const QString path = m_folder + "/" + fileOf(kModelA, f);
        QByteArray bytes = baton::test::readFile(path);
        QVERIFY(!bytes.isEmpty());
        std::vector<ConvertedShape> shapes = kShapes;
        std::string identity = kModelA;
        if (damage == "truncated")
            bytes.chop(bytes.size() / 3);
        if (damage == "garbage")
            bytes = QByteArray(bytes.size(), '\x5a');
        if (damage == "empty")
            bytes.clear();
        if (damage == "renamed") { // model A's file under model B's name
            QVERIFY(QFile::rename(path, m_folder + "/" + fileOf(kModelB, f)));
            identity = kModelB;
        }
        if (damage == "layout") { // the same length: a layout this build does not know
            const int at = bytes.indexOf("\"layout\":\"1\"");
            QVERIFY(at > 0);
            bytes[at + 10] = '0';
        }
        if (damage == "misaligned") { // one more header byte: every tensor one byte later
            const uint64_t n = uint64_t(uchar(bytes[0])) | uint64_t(uchar(bytes[1])) << 8 |
                               uint64_t(uchar(bytes[2])) << 16;
            bytes.insert(int(8 + n), ' ');
            for (int i = 0; i < 8; ++i)
                bytes[i] = char(((n + 1) >> (8 * i)) & 0xff);
        }
        if (damage == "missing matrix")
            shapes.push_back({"h.1.mlp.c_fc.weight", 7, 70});
        if (damage == "other shape")
            shapes[0].cols = 64;
        if (damage != "renamed")
            QVERIFY(baton::test::writeFile(path, bytes));
        QVERIFY(!ConvertedWeights::open(identity, f, shapes).has_value());
        QCOMPARE(keptFiles(m_folder), QStringList());
    }

    // The folder stays under its cap: the least recently used files (written or mapped)
    // go first; a file alone over the cap is not written, and nothing is removed for it.
    void theLeastRecentlyUsedMakeRoom() {
        const WeightFormat f = WeightFormat::Int8;
        const qint64 one = fileBytes(f);
        setConvertedWeightsFolder(m_folder.toStdString(), uint64_t(2 * one + one / 2));
        keep(kModelA, f);
        QThread::msleep(30); // past the file system clock's tick
        keep(kModelB, f);
        QThread::msleep(30);
        QVERIFY(ConvertedWeights::open(kModelA, f, kShapes).has_value()); // A used again
        QThread::msleep(30);
        keep(kModelC, f);
        QCOMPARE(keptFiles(m_folder), (QStringList{fileOf(kModelC, f), fileOf(kModelA, f)}));

        setConvertedWeightsFolder(m_folder.toStdString(), uint64_t(one / 2));
        const Matrices m = randomMatrices(f, 1);
        const auto r = keepConvertedWeights(kModelB, "/models/b", f, m.named());
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.find("cap") != std::string::npos, r.error().message.c_str());
        QCOMPARE(keptFiles(m_folder), (QStringList{fileOf(kModelC, f), fileOf(kModelA, f)}));
    }

    // The listing names each kept file's model folder, identity and format, most
    // recently used first, and leaves out files that are not kept weights; clearing
    // removes every kept file and nothing else.
    void keptFilesAreListedAndCleared() {
        keep(kModelA, WeightFormat::Int8);
        QThread::msleep(30);
        keep(kModelB, WeightFormat::Q4);
        QVERIFY(baton::test::writeFile(m_folder + "/stray.safetensors", "not a kept file"));
        QVERIFY(baton::test::writeFile(m_folder + "/notes.txt", "the user's own"));
        QCOMPARE(keptWeightsFolder(), m_folder.toStdString());
        const std::vector<KeptWeights> kept = keptWeights();
        QCOMPARE(kept.size(), size_t(2));
        QCOMPARE(kept[0].identity, kModelB);
        QCOMPARE(kept[0].format, std::string("q4"));
        QCOMPARE(kept[1].identity, kModelA);
        QCOMPARE(kept[1].format, std::string("int8"));
        qint64 bytes = QFileInfo(m_folder + "/stray.safetensors").size();
        for (const KeptWeights& k : kept) {
            QCOMPARE(k.model, std::string("/models/m"));
            QCOMPARE(k.bytes, QFileInfo(QString::fromStdString(k.path)).size());
            QVERIFY(k.lastUsed > 1700000000);
            bytes += k.bytes;
        }
        QCOMPARE(clearKeptWeights(), int64_t(bytes));
        QCOMPARE(keptFiles(m_folder), QStringList{"notes.txt"});
        QVERIFY(keptWeights().empty());
    }

    // A write that stops half-way (here: cancelled) leaves no file, and the temporary
    // file of a process that died mid-write is removed by the next write; a live
    // process's is left alone.
    void unfinishedWritesLeaveNothing() {
        const Matrices m = randomMatrices(WeightFormat::Q4, 1);
        const auto r = keepConvertedWeights(kModelA, "/models/a", WeightFormat::Q4, m.named(),
                                            [](double) { return false; });
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::Cancelled);
        QCOMPARE(keptFiles(m_folder), QStringList());

        const pid_t child = ::fork();
        if (child == 0)
            ::_exit(0);
        QVERIFY(child > 0);
        QCOMPARE(::waitpid(child, nullptr, 0), child);
        const QString dead = fileOf(kModelB, WeightFormat::Q4) + ".tmp-" + QString::number(child);
        const QString alive =
            fileOf(kModelC, WeightFormat::Q4) + ".tmp-" + QString::number(::getpid());
        QVERIFY(baton::test::writeFile(m_folder + "/" + dead, "half a file"));
        QVERIFY(baton::test::writeFile(m_folder + "/" + alive, "being written"));
        QVERIFY(!ConvertedWeights::open(kModelB, WeightFormat::Q4, kShapes).has_value());
        keep(kModelA, WeightFormat::Q4);
        QStringList expected{fileOf(kModelA, WeightFormat::Q4), alive};
        expected.sort();
        QCOMPARE(keptFiles(m_folder), expected);
    }
};

QTEST_GUILESS_MAIN(TestConvertedWeights)
#include "tst_converted_weights.moc"
