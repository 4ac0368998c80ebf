// The one JSON reader (common/json.h): parse errors in words without exceptions, and
// typed fields with ranges, required or optional, naming the field that is wrong.
#include <baton/common/json.h>

#include <QtTest>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using baton::json::FieldReader;
using baton::json::Json;

class TestJson : public QObject {
    Q_OBJECT

    static Json parsed(const char* text) {
        std::string why;
        auto j = baton::json::parse(text, &why);
        if (!j)
            qWarning("unexpected parse error: %s", why.c_str());
        return j ? *j : Json();
    }

private Q_SLOTS:
    void parseAcceptsJsonAndExplainsTheRest_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("why");
        QTest::newRow("truncated") << QByteArray("{\"a\": ") << "syntax error";
        QTest::newRow("empty") << QByteArray("") << "syntax error";
        QTest::newRow("two values") << QByteArray("{} {}") << "syntax error";
        QTest::newRow("bad utf-8 in a string") << QByteArray("{\"a\": \"\xFF\"}") << "UTF-8";
        QTest::newRow("bare word") << QByteArray("{\"a\": nope}") << "syntax error";
    }
    void parseAcceptsJsonAndExplainsTheRest() {
        QFETCH(QByteArray, text);
        QFETCH(QString, why);
        std::string error;
        const auto j =
            baton::json::parse(std::string_view(text.constData(), size_t(text.size())), &error);
        QVERIFY(!j);
        QVERIFY2(QString::fromStdString(error).contains(why), error.c_str());
        // Without nlohmann's "[json.exception.parse_error.101] " prefix.
        QVERIFY2(!QString::fromStdString(error).startsWith("[json"), error.c_str());
        QVERIFY(baton::json::parse("{\"a\": [1, 2.5, \"x\", null]}", nullptr));
    }

    void readsEveryTypeInRange() {
        const Json j = parsed(R"({"i": 7, "d": 0.5, "b": true, "s": "text", "l": ["a", "b"],
                                  "u": 18446744073709551615, "n": null})");
        FieldReader r(j);
        int i = 0;
        double d = 0;
        bool b = false;
        std::string s;
        std::vector<std::string> l;
        QVERIFY(r.integer("i", 0, 10, i));
        QVERIFY(r.number("d", 0, 1, d));
        QVERIFY(r.boolean("b", b));
        QVERIFY(r.string("s", s));
        QVERIFY(r.strings("l", l, true));
        QVERIFY(r.ok());
        QCOMPARE(i, 7);
        QCOMPARE(d, 0.5);
        QVERIFY(b);
        QCOMPARE(s, std::string("text"));
        QCOMPARE(l, (std::vector<std::string>{"a", "b"}));
        // Absent and null optional fields leave the value alone and are not errors.
        int kept = 42;
        QVERIFY(!r.integer("absent", 0, 100, kept));
        QVERIFY(!r.integer("n", 0, 100, kept));
        QCOMPARE(kept, 42);
        QVERIFY(r.ok());
    }

    void namesTheWrongField_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("message");
        QTest::newRow("out of range")
            << QByteArray(R"({"i": 11})") << R"("i" must be an integer in [0, 10], not 11)";
        QTest::newRow("a float for an integer")
            << QByteArray(R"({"i": 1.5})") << R"("i" must be an integer in [0, 10], not 1.5)";
        QTest::newRow("above int64")
            << QByteArray(R"({"i": 18446744073709551615})") << R"("i" must be an integer)";
        QTest::newRow("a string for an integer")
            << QByteArray(R"({"i": "3"})") << R"("i" must be an integer in [0, 10], not "3")";
        QTest::newRow("missing") << QByteArray(R"({})") << R"("i" is missing)";
        QTest::newRow("not an object") << QByteArray(R"([1])") << "not a JSON object";
    }
    void namesTheWrongField() {
        QFETCH(QByteArray, text);
        QFETCH(QString, message);
        const Json j = parsed(text.constData());
        FieldReader r(j);
        int i = 5;
        QVERIFY(!r.integer("i", 0, 10, i, FieldReader::Required));
        QVERIFY(!r.ok());
        QVERIFY2(QString::fromStdString(r.error()).startsWith(message), r.error().c_str());
        QCOMPARE(i, 5); // untouched
    }

    void theFirstErrorStaysAndLaterReadsDoNothing() {
        const Json j = parsed(R"({"a": "x", "b": 2, "c": -1, "l": ["", "y"]})");
        FieldReader r(j);
        double a = 0;
        int b = 0, c = 0;
        QVERIFY(!r.number("a", 0, 1, a));
        QVERIFY(!r.integer("b", 0, 10, b)); // valid, but after an error
        QCOMPARE(b, 0);
        QVERIFY(!r.integer("c", 0, 10, c));
        QVERIFY2(r.error().find("\"a\"") == 0, r.error().c_str());

        FieldReader numbers(j);
        QVERIFY(!numbers.integer("c", 0, std::numeric_limits<int>::max(), c));
        QVERIFY(numbers.error().find("not -1") != std::string::npos);

        FieldReader lists(j);
        std::vector<std::string> l;
        QVERIFY(lists.strings("l", l, /*nonEmpty=*/false));
        QCOMPARE(l.size(), size_t(2));
        FieldReader nonEmpty(j);
        QVERIFY(!nonEmpty.strings("l", l, /*nonEmpty=*/true));
        QVERIFY(nonEmpty.error().find("non-empty") != std::string::npos);

        const Json w = parsed(R"({"w": [1, 2, 8], "bad": [1, 0], "mixed": [1, "2"], "n": 3})");
        std::vector<int> out;
        FieldReader ints(w);
        QVERIFY(ints.integers("w", 1, 10, out));
        QCOMPARE(out, (std::vector<int>{1, 2, 8}));
        for (const char* key : {"bad", "mixed", "n"}) {
            FieldReader refused(w);
            std::vector<int> kept{7};
            QVERIFY(!refused.integers(key, 1, 10, kept));
            QCOMPARE(kept, std::vector<int>{7}); // untouched
            QVERIFY2(refused.error().find("an array of integers in [1, 10]") != std::string::npos,
                     refused.error().c_str());
        }
    }

    void rejectsNonFiniteAndOutOfRangeNumbers() {
        const Json j = parsed(R"({"big": 1e308, "neg": -0.5})");
        FieldReader r(j);
        double v = 0;
        QVERIFY(r.number("big", 0, std::numeric_limits<double>::max(), v));
        QVERIFY(!r.number("neg", 0, 1, v));
        QVERIFY2(r.error() == R"("neg" must be a number in [0, 1], not -0.5)", r.error().c_str());
    }
};

QTEST_MAIN(TestJson)
#include "tst_json.moc"
