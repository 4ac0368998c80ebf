// The safetensors reader: every way a file can lie gets its own error, and the
// writer's output reads back exactly.
#include "test_support.h"
#include "verify_ok.h"

#include "model/safetensors.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace baton::engine;

namespace {

QByteArray stFile(const QByteArray& header, const QByteArray& data, qint64 claimedLength = -1) {
    QByteArray out(8, '\0');
    uint64_t n = claimedLength >= 0 ? uint64_t(claimedLength) : uint64_t(header.size());
    for (int i = 0; i < 8; ++i) {
        out[i] = char(n & 0xFF);
        n >>= 8;
    }
    return out + header + data;
}

} // namespace

class TestSafetensors : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    Result<SafetensorsFile> openBytes(const QByteArray& bytes) {
        const QString path = m_dir.filePath("t.safetensors");
        baton::test::writeFile(path, bytes);
        return openSafetensors(path.toStdString());
    }

private Q_SLOTS:
    void badFiles_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<int>("code");
        const QByteArray data16(16, '\x01');
        const QByteArray good = R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
        QTest::newRow("too short") << QByteArray("abc") << int(ErrorCode::TruncatedFile);
        QTest::newRow("header past end")
            << stFile(good, data16, 5000) << int(ErrorCode::TruncatedFile);
        QTest::newRow("header over 100 MB")
            << stFile(good, data16, 200ll << 20) << int(ErrorCode::HeaderTooLarge);
        QTest::newRow("truncated data")
            << stFile(good, data16.left(10)) << int(ErrorCode::TruncatedFile);
        QTest::newRow("not json") << stFile("{not json", data16) << int(ErrorCode::InvalidJson);
        QTest::newRow("not utf-8") << stFile("{\"\xFF\":1}", data16) << int(ErrorCode::InvalidUtf8);
        QTest::newRow("not an object") << stFile("[1,2]", data16) << int(ErrorCode::BadHeader);
        QTest::newRow("missing fields")
            << stFile(R"({"a":{"dtype":"F32","shape":[4]}})", data16) << int(ErrorCode::BadHeader);
        QTest::newRow("negative dim")
            << stFile(R"({"a":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}})", data16)
            << int(ErrorCode::BadHeader);
        QTest::newRow("unknown dtype")
            << stFile(R"({"a":{"dtype":"F31","shape":[4],"data_offsets":[0,16]}})", data16)
            << int(ErrorCode::UnknownDtype);
        QTest::newRow("offsets lie about the size")
            << stFile(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})", data16)
            << int(ErrorCode::BadOffsets);
        QTest::newRow("end before begin")
            << stFile(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})", data16)
            << int(ErrorCode::BadOffsets);
        QTest::newRow("overlap") << stFile(
                                        R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},)"
                                        R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                                        data16)
                                 << int(ErrorCode::OverlappingOffsets);
        QTest::newRow("out of range")
            << stFile(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                      R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4096,4104]}})",
                      data16)
            << int(ErrorCode::OffsetOutOfRange);
        QTest::newRow("hole") << stFile(
                                     R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                     R"("b":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}})",
                                     data16)
                              << int(ErrorCode::BadOffsets);
        QTest::newRow("trailing bytes")
            << stFile(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", data16)
            << int(ErrorCode::BadOffsets);
        QTest::newRow("duplicate name")
            << stFile(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                      R"("a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                      data16)
            << int(ErrorCode::BadHeader);
        QTest::newRow("metadata not strings")
            << stFile(
                   R"({"__metadata__":{"x":1},"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",
                   data16)
            << int(ErrorCode::BadHeader);
    }
    void badFiles() {
        QFETCH(QByteArray, bytes);
        QFETCH(int, code);
        auto r = openBytes(bytes);
        QVERIFY2(!r.ok(), "a bad file was accepted");
        QCOMPARE(errorCodeName(r.error().code), errorCodeName(ErrorCode(code)));
        QVERIFY(r.error().message.find("t.safetensors") != std::string::npos);
    }

    void missingFile() {
        auto r = openSafetensors(m_dir.filePath("nope.safetensors").toStdString());
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::FileNotFound);
    }

    void goodFileReads() {
        const QByteArray data = QByteArray::fromHex("0000803f000000400000404000008040");
        auto r = openBytes(stFile(
            R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})",
            data));
        BATON_VERIFY_OK(r);
        QCOMPARE(r->tensors().size(), size_t(1));
        QCOMPARE(r->metadata().at("format"), std::string("pt"));
        const StTensor* t = r->find("w");
        QVERIFY(t);
        QCOMPARE(t->numel(), int64_t(4));
        float v[4];
        QVERIFY(r->read(*t, v).ok());
        QCOMPARE(v[0], 1.f);
        QCOMPARE(v[3], 4.f);
    }

    void writerRoundTrip() {
        const std::vector<float> a = {1.5f, -2.f, 3.25f};
        const std::vector<uint16_t> b = {1, 2, 3, 4};
        const std::string path = m_dir.filePath("w.safetensors").toStdString();
        QVERIFY(writeSafetensors(path,
                                 {{"a", StDtype::F32, {3}, a.data(), a.size() * 4},
                                  {"b.half", StDtype::F16, {2, 2}, b.data(), b.size() * 2}},
                                 {{"k", "v"}})
                    .ok());
        auto r = openSafetensors(path);
        BATON_VERIFY_OK(r);
        std::vector<float> a2(3);
        QVERIFY(r->read(*r->find("a"), a2.data()).ok());
        QCOMPARE(a2, a);
        QCOMPARE(r->find("b.half")->dtype, StDtype::F16);
        QCOMPARE(r->find("b.half")->shape, (std::vector<int64_t>{2, 2}));
        QCOMPARE(r->metadata().at("k"), std::string("v"));
        QVERIFY(!QFile::exists(QString::fromStdString(path) + ".tmp-" +
                               QString::number(QCoreApplication::applicationPid())));
    }
};

QTEST_GUILESS_MAIN(TestSafetensors)
#include "tst_safetensors.moc"
