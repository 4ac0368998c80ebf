// The small training runs of the end-to-end tests: a corpus cut from one Austen book
// and the options of a short `baton-cli train` run on the fixture checkpoint.
#pragma once

#include "test_support.h"

#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>

#include <vector>

namespace baton::test {

struct TrainingTexts {
    QString corpus; // a folder of three training documents
    QString val;    // a held-out document
    QString error;  // empty when both were written
};

// Writes three 6,000-byte training documents and a 4,000-byte validation document,
// cut from the first book of ../shared/corpus/books, under `dir`.
inline TrainingTexts writeTrainingTexts(const QString& dir) {
    TrainingTexts t;
    const QString austen = sharedPath("corpus/books");
    const QStringList books = QDir(austen).entryList({"*.txt"}, QDir::Files, QDir::Name);
    if (books.isEmpty()) {
        t.error = missingMessage(austen);
        return t;
    }
    const QByteArray text = readFile(austen + "/" + books.first());
    if (text.size() < 100000) {
        t.error = austen + "/" + books.first() + " is shorter than 100 kB";
        return t;
    }
    t.corpus = dir + "/corpus";
    QDir().mkpath(t.corpus);
    for (int i = 0; i < 3; ++i)
        if (!writeFile(t.corpus + QString("/part%1.txt").arg(i), text.mid(20000 + i * 6000, 6000)))
            t.error = "could not write " + t.corpus;
    t.val = dir + "/val.txt";
    if (!writeFile(t.val, text.mid(60000, 4000)))
        t.error = "could not write " + t.val;
    return t;
}

// A short run on the fixture: window 16, overlap 4, three windows of backpropagation,
// lr 3e-3 after 2 warm-up steps, validation only at the end on 200 tokens, a
// checkpoint every 2 steps, JSON progress, one thread.
inline QStringList fixtureTrainArgs(const QString& out, const QString& corpus, const QString& val,
                                    const QString& mode, int steps, int batch) {
    return {"train",
            "--base",
            fixtureDir(),
            "--out",
            out,
            "--mode",
            mode,
            "--corpus",
            corpus,
            "--val",
            val,
            "--window",
            "16",
            "--overlap",
            "4",
            "--bptt-windows",
            "3",
            "--batch",
            QString::number(batch),
            "--steps",
            QString::number(steps),
            "--lr",
            "3e-3",
            "--warmup",
            "2",
            "--validate-every",
            "0",
            "--val-tokens",
            "200",
            "--checkpoint-every",
            "2",
            "--json-progress",
            "--threads",
            "1"};
}

// The events of `train --json-progress` output, one JSON object a line.
inline std::vector<QJsonObject> jsonLines(const QByteArray& out) {
    std::vector<QJsonObject> events;
    for (const auto& line : out.split('\n'))
        if (!line.trimmed().isEmpty())
            events.push_back(QJsonDocument::fromJson(line).object());
    return events;
}

// Those of one kind ("step", "validation", "done", ...).
inline std::vector<QJsonObject> jsonEvents(const QByteArray& out, const QString& kind) {
    std::vector<QJsonObject> picked;
    for (auto& e : jsonLines(out))
        if (e["event"].toString() == kind)
            picked.push_back(std::move(e));
    return picked;
}

} // namespace baton::test
