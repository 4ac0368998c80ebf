// unwrapText: hard-wrapped paragraphs are joined, deliberate breaks are kept, verse
// numbers go; checked on made-up text and on the shared corpus.
#include "test_support.h"

#include <baton/engine/text.h>

#include <QtTest>

#include <random>

using baton::engine::unwrapText;

namespace {

// Greedy wrapping at `width` columns, as Project Gutenberg's texts were made.
std::string wrap(const std::string& paragraph, size_t width, const std::string& indent = "") {
    std::string out, line = indent;
    size_t pos = 0;
    while (pos < paragraph.size()) {
        size_t end = paragraph.find(' ', pos);
        if (end == std::string::npos)
            end = paragraph.size();
        const std::string word = paragraph.substr(pos, end - pos);
        if (line.size() > indent.size() && line.size() + 1 + word.size() > width) {
            out += line + "\n";
            line = indent;
        }
        line += (line.size() > indent.size() ? " " : "") + word;
        pos = end + 1;
    }
    return out + line;
}

std::string randomParagraph(std::mt19937& rng, int words) {
    static const char* pool[] = {"the",     "lady",  "was",       "not",    "so",   "very",
                                 "amiable", "as",    "her",       "sister", "and",  "Mr.",
                                 "Darcy",   "never", "thought",   "it",     "of",   "consequence",
                                 "to",      "walk",  "Longbourn", "a",      "mile", "together--"};
    std::string p;
    for (int i = 0; i < words; ++i)
        p += std::string(i ? " " : "") + pool[rng() % (sizeof(pool) / sizeof(pool[0]))];
    return p + ".";
}

} // namespace

class TestText : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void wrappedProseComesBack() {
        std::mt19937 rng(3);
        for (int round = 0; round < 20; ++round) {
            std::vector<std::string> paragraphs;
            std::string wrapped;
            for (int i = 0; i < 12; ++i) {
                paragraphs.push_back(randomParagraph(rng, 20 + int(rng() % 120)));
                wrapped += (i ? "\n\n" : "") + wrap(paragraphs.back(), 70);
            }
            std::string expected;
            for (size_t i = 0; i < paragraphs.size(); ++i)
                expected += (i ? "\n\n" : "") + paragraphs[i];
            QCOMPARE(QString::fromStdString(unwrapText(wrapped + "\n")),
                     QString::fromStdString(expected + "\n"));
        }
    }

    void deliberateBreaksStay() {
        std::mt19937 rng(5);
        std::string text;
        for (int i = 0; i < 6; ++i)
            text += wrap(randomParagraph(rng, 60), 72) + "\n\n";
        const std::string poem = "    My first doth affliction denote,\n"
                                 "      Which my second is destin'd to feel\n"
                                 "    And my whole is the best antidote\n"
                                 "      That affliction to soften and heal.";
        const std::string dialogue = "\"Yes,\" said he.\n\n\"No,\" said she.";
        const std::string address = "     \"I am, dear Madam,\n"
                                    "               \"Your most obedient";
        text += poem + "\n\n" + dialogue + "\n\n" + address + "\n";
        const std::string out = unwrapText(text);
        QVERIFY(out.find(poem) != std::string::npos);
        QVERIFY(out.find(dialogue) != std::string::npos);
        QVERIFY(out.find(address) != std::string::npos);
    }

    void indentedLettersAreJoined() {
        std::mt19937 rng(7);
        std::string text;
        for (int i = 0; i < 6; ++i)
            text += wrap(randomParagraph(rng, 60), 72) + "\n\n";
        const std::string letter =
            "I have just had the honour of receiving your letter, for which I beg to return "
            "my sincere acknowledgments, and to assure you of my perfect esteem.";
        text += wrap(letter, 57, "     ") + "\n";
        QVERIFY(unwrapText(text).find("     " + letter + "\n") != std::string::npos);
    }

    void verseNumbersGo() {
        std::string text = "Genesis 1\n\n";
        std::string expected = "Genesis 1\n\n";
        std::mt19937 rng(11);
        for (int v = 1; v <= 30; ++v) {
            const std::string verse = "And " + randomParagraph(rng, 8 + int(rng() % 30));
            text += "  " + wrap(std::to_string(v) + " " + verse, 76) + "\n";
            expected += verse + "\n";
        }
        QCOMPARE(QString::fromStdString(unwrapText(text)), QString::fromStdString(expected));
        // Indented numbers that do not count up are not verses.
        const std::string list = "  3 apples\n  7 pears\n  2 plums\n";
        QCOMPARE(QString::fromStdString(unwrapText(list)), QString::fromStdString(list));
    }

    void unwrappedTextStaysAsItIs() {
        std::mt19937 rng(13);
        std::string text;
        for (int i = 0; i < 10; ++i)
            text += randomParagraph(rng, 40 + int(rng() % 80)) + "\n";
        QCOMPARE(QString::fromStdString(unwrapText(text)), QString::fromStdString(text));
        QCOMPARE(QString::fromStdString(unwrapText("")), QString());
        QCOMPARE(QString::fromStdString(unwrapText("one line")), QString("one line"));
        // Windows line endings read as line endings.
        std::string crlf;
        for (int i = 0; i < 4; ++i)
            crlf += wrap(randomParagraph(rng, 80), 70) + "\n\n";
        std::string windows;
        for (char c : crlf)
            windows += c == '\n' ? std::string("\r\n") : std::string(1, c);
        QCOMPARE(QString::fromStdString(unwrapText(windows)),
                 QString::fromStdString(unwrapText(crlf)));
    }

    void theCorpusLosesItsWraps() {
        const QString books = baton::test::sharedPath("corpus/books");
        QVERIFY2(QDir(books).exists(), qPrintable(baton::test::missingMessage(books)));
        for (const QString& name : QDir(books).entryList({"*.txt"}, QDir::Files)) {
            const std::string text = baton::test::readFile(books + "/" + name).toStdString();
            const std::string out = unwrapText(text);
            // Hard wraps: an unindented line of 50-80 columns continued by a line that
            // starts in lower case.
            int wraps = 0, lines = 0, numbered = 0;
            size_t pos = 0;
            std::string previous;
            while (pos < out.size()) {
                size_t nl = out.find('\n', pos);
                if (nl == std::string::npos)
                    nl = out.size();
                const std::string line = out.substr(pos, nl - pos);
                if (!line.empty()) {
                    ++lines;
                    if (!previous.empty() && previous[0] != ' ' && previous.size() >= 50 &&
                        previous.size() <= 80 && std::islower(static_cast<unsigned char>(line[0])))
                        ++wraps;
                    if (line.size() > 3 && line[0] == ' ' && std::isdigit(line[2]))
                        ++numbered;
                }
                previous = line;
                pos = nl + 1;
            }
            QVERIFY2(wraps * 100 < lines,
                     qPrintable(
                         QString("%1: %2 wraps left in %3 lines").arg(name).arg(wraps).arg(lines)));
            QCOMPARE(numbered, 0);
        }
    }
};

QTEST_GUILESS_MAIN(TestText)
#include "tst_text.moc"
