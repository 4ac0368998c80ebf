#include "test_support.h"

#include "util/utf8.h"

#include <baton/engine/tokenizer.h>

#include <QtTest>

using namespace baton::engine;

namespace {

// A tokenizer whose tokens are single bytes, to drive StreamDecoder byte by byte.
class ByteTokenizer : public Tokenizer {
public:
    std::string kind() const override { return "bytes"; }
    int vocabSize() const override { return 256; }
    std::vector<int32_t> encode(std::string_view t) const override {
        std::vector<int32_t> ids;
        for (unsigned char c : t)
            ids.push_back(c);
        return ids;
    }
    std::string decode(const std::vector<int32_t>& ids) const override {
        std::string s;
        for (auto id : ids)
            s.push_back(static_cast<char>(id));
        return s;
    }
    std::string tokenBytes(int32_t id) const override { return std::string(1, char(id)); }
    int eosId() const override { return -1; }
    std::string identity() const override { return "bytes"; }
};

} // namespace

class TestUtf8 : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void validation_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<int>("firstBad"); // -1 = valid
        QTest::newRow("ascii") << QByteArray("hello") << -1;
        QTest::newRow("two-byte") << QByteArray("caf\xC3\xA9") << -1;
        QTest::newRow("four-byte") << QByteArray("\xF0\x9F\xA4\x96") << -1;
        QTest::newRow("lone continuation") << QByteArray("a\x80z") << 1;
        QTest::newRow("overlong") << QByteArray("\xC0\xAF") << 0;
        QTest::newRow("overlong three") << QByteArray("\xE0\x80\xAF") << 0;
        QTest::newRow("surrogate") << QByteArray("x\xED\xA0\x80") << 1;
        QTest::newRow("beyond U+10FFFF") << QByteArray("\xF4\x90\x80\x80") << 0;
        QTest::newRow("truncated") << QByteArray("ok\xE2\x82") << 2;
        QTest::newRow("invalid lead") << QByteArray("\xFF") << 0;
    }
    void validation() {
        QFETCH(QByteArray, bytes);
        QFETCH(int, firstBad);
        const size_t bad = utf8::firstInvalid(std::string_view(bytes.constData(), bytes.size()));
        QCOMPARE(bad == std::string_view::npos ? -1 : static_cast<int>(bad), firstBad);
    }

    void completePrefix() {
        QCOMPARE(utf8::completePrefixLength("ab"), size_t(2));
        QCOMPARE(utf8::completePrefixLength("a\xC3"), size_t(1));
        QCOMPARE(utf8::completePrefixLength("a\xF0\x9F\xA4"), size_t(1));
        QCOMPARE(utf8::completePrefixLength("a\xF0\x9F\xA4\x96"), size_t(5));
        // Bytes that can never complete are not held back.
        QCOMPARE(utf8::completePrefixLength("a\xFF"), size_t(2));
        QCOMPARE(utf8::completePrefixLength("a\xE0\x80"), size_t(3));
    }

    void sanitizeReplacesEachBadByte() {
        QCOMPARE(QByteArray::fromStdString(utf8::sanitize("a\xFF"
                                                          "b")),
                 QByteArray("a\xEF\xBF\xBD"
                            "b"));
        QCOMPARE(QByteArray::fromStdString(utf8::sanitize("caf\xC3\xA9")),
                 QByteArray("caf\xC3\xA9"));
    }

    void streamDecoderNeverSplitsACharacter() {
        auto tok = std::make_shared<ByteTokenizer>();
        const std::string text = "Na\xC3\xAFve \xF0\x9F\xA4\x96 caf\xC3\xA9 \xE2\x80\x94 end";
        StreamDecoder dec(tok);
        std::string out;
        for (unsigned char c : text) {
            const std::string piece = dec.push(c);
            QVERIFY(utf8::isValid(piece)); // every emitted piece is complete UTF-8
            out += piece;
        }
        out += dec.finish();
        QCOMPARE(QByteArray::fromStdString(out), QByteArray::fromStdString(text));
    }

    void streamDecoderReplacesBrokenBytes() {
        auto tok = std::make_shared<ByteTokenizer>();
        StreamDecoder dec(tok);
        std::string out = dec.push('a');
        out += dec.push(0x80); // a stray continuation byte can never become valid
        QCOMPARE(QByteArray::fromStdString(out), QByteArray("a\xEF\xBF\xBD"));
        out += dec.push(0xE2);
        QCOMPARE(dec.pendingBytes(), size_t(1));
        out += dec.finish(); // an unfinished character at the end
        QCOMPARE(QByteArray::fromStdString(out), QByteArray("a\xEF\xBF\xBD\xEF\xBF\xBD"));
    }
};

QTEST_GUILESS_MAIN(TestUtf8)
#include "tst_utf8.moc"
