// The lab pages' presenters (Compare overlaps, Fine-tune) against a fake LabBackend:
// what they ask of the engine and the storage, and what they make of the answers.
#include "epub_fixture.h"
#include "fake_lab_backend.h"
#include "tar_fixture.h"
#include "test_support.h"

#include "compare_presenter.h"
#include "finetune_presenter.h"
#include "model_catalog.h"

#include <baton/engine/text.h>

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>

using namespace baton;
using namespace baton::ui;
using baton::test::FakeLabBackend;

namespace {

engine::ScoreResult row(int T, int o, double nll) {
    engine::ScoreResult r;
    r.windows = {T, o};
    r.scoredTokens = 100;
    r.nllSum = nll;
    r.tokenPerplexity = std::exp(nll / 100);
    return r;
}

// A catalog entry of this shape (what recurrencePreset reads).
CatalogModel shaped(const QString& path, int layers, int width, int positions, int vocabulary) {
    CatalogModel m;
    m.path = path;
    m.layers = layers;
    m.width = width;
    m.positions = positions;
    m.vocabulary = vocabulary;
    return m;
}

} // namespace

class TestLabPresenters : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    storage::StorageController m_storage; // never opened: the catalog stays empty
    std::unique_ptr<ModelCatalog> m_catalog;

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        qRegisterMetaType<ErrorText>();
        m_catalog = std::make_unique<ModelCatalog>(m_storage, QStringList());
    }

    void numberLists() {
        std::vector<int> v;
        QVERIFY(parseNumberList(QStringLiteral("128, 256;64 128"), v));
        QCOMPARE(v, (std::vector<int>{128, 256, 64}));
        QVERIFY(!parseNumberList(QStringLiteral("12x"), v));
        QVERIFY(v.empty());
        QVERIFY(parseNumberList(QStringLiteral(""), v) && v.empty());
    }

    void compareRefusesWhatCannotRun() {
        FakeLabBackend fake;
        ComparePresenter p(fake, *m_catalog);
        QSignalSpy status(&p, &ComparePresenter::status);
        CompareRequest r{{"/m/a"}, "Some text.", "a file", "16", "0, 4"};
        auto refused = [&](CompareRequest bad, const char* says) {
            QVERIFY(!p.evaluate(bad));
            QVERIFY2(status.last().at(0).toString().contains(QLatin1String(says)), says);
        };
        CompareRequest bad = r;
        bad.windows = "sixteen";
        refused(bad, "numbers");
        bad = r;
        bad.overlaps = "16, 20";
        refused(bad, "No valid setting");
        bad = r;
        bad.models = {""};
        refused(bad, "Choose a model");
        bad = r;
        bad.text = "  ";
        refused(bad, "no text");
        QVERIFY(fake.jobs.empty());
    }

    void compareEvaluatesStoresAndReopens() {
        FakeLabBackend fake;
        ComparePresenter p(fake, *m_catalog);
        QSignalSpy finished(&p, &ComparePresenter::finished);
        QSignalSpy busy(&p, &ComparePresenter::busyChanged);
        QSignalSpy status(&p, &ComparePresenter::status);
        // Two models, T 16 with o 0 and 4 (o 16 is skipped and said so).
        QVERIFY(p.evaluate({{"/m/a", "/m/b", "/m/a"}, "Some text.", "a file", "16", "0 4 16"}));
        QVERIFY(status.last().at(0).toString().contains(QLatin1String("Skipped")));
        QCOMPARE(fake.jobs.size(), size_t(4)); // a load and an evaluation per model
        const engine::JobId evalA = fake.jobOf("evaluate", 0), evalB = fake.jobOf("evaluate", 1);
        QCOMPARE(fake.jobs[evalA].evaluate.settings.size(), size_t(2));
        QCOMPARE(fake.jobs[evalA].evaluate.text, std::string("Some text."));
        QVERIFY(p.running());
        engine::ModelInfo info;
        info.config.nLayer = 2;
        info.config.nEmbd = 64;
        info.config.vocabSize = 100;
        fake.modelLoaded(fake.jobOf("load", 0), info);
        fake.jobFinished(fake.jobOf("load", 0), true, {});
        fake.evaluationRow(evalA, row(16, 0, 300), true);
        fake.evaluationRow(evalA, row(16, 4, 290), true);
        fake.evaluationRow(evalA, row(16, 4, 999), false); // state off: not a row
        fake.jobFinished(evalA, true, {});
        fake.jobFinished(fake.jobOf("load", 1), true, {});
        fake.evaluationRow(evalB, row(16, 0, 310), true);
        QVERIFY(finished.isEmpty());
        fake.jobFinished(evalB, true, {});
        QCOMPARE(finished.count(), 1);
        QVERIFY(finished.at(0).at(0).toBool());
        QVERIFY(!p.running());
        QVERIFY(!busy.last().at(0).toBool());
        QCOMPARE(p.rows().size(), size_t(3));
        QCOMPARE(fake.results.size(), size_t(3)); // stored as they came
        // FLOPs from the loaded model's shape; none for the model whose load said nothing.
        QVERIFY(p.rows()[0].flopsPerToken > 0);
        QCOMPARE(p.rows()[2].flopsPerToken, 0.0);
        QCOMPARE(p.rows()[0].textId, std::string("a file"));
        // The stored texts: one, with its three results; reopened, the rows come back.
        QSignalSpy texts(&p, &ComparePresenter::storedTextsChanged);
        p.refreshHistory();
        const auto list = texts.last().at(0).value<std::vector<StoredText>>();
        QCOMPARE(list.size(), size_t(1));
        QCOMPARE(list[0].results, 3);
        ComparePresenter other(fake, *m_catalog);
        other.reopen(list[0].hash);
        QCOMPARE(other.rows().size(), size_t(3));
        QCOMPARE(other.latestRows().size(), size_t(3));
    }

    void aFailedLoadStopsTheRun() {
        FakeLabBackend fake;
        ComparePresenter p(fake, *m_catalog);
        QSignalSpy failed(&p, &ComparePresenter::failed);
        QSignalSpy finished(&p, &ComparePresenter::finished);
        QVERIFY(p.evaluate({{"/m/a", "/m/b"}, "Text.", "t", "16", "0"}));
        fake.jobFinished(fake.jobOf("load", 0), false,
                         {engine::ErrorCode::TruncatedFile, "truncated"});
        QCOMPARE(failed.count(), 1);
        QCOMPARE(fake.cancelled.size(), size_t(3)); // the rest of the run
        for (const auto& [id, j] : fake.jobs)
            if (id != fake.jobOf("load", 0))
                fake.jobFinished(id, false, {engine::ErrorCode::Cancelled, "cancelled"});
        QCOMPARE(failed.count(), 1); // said once
        QCOMPARE(finished.count(), 1);
        QVERIFY(!finished.at(0).at(0).toBool());
        // Storage errors are reported too.
        fake.failStorage = true;
        p.refreshHistory();
        QCOMPARE(failed.count(), 2);
    }

    void continuationsShareTheirSeed() {
        FakeLabBackend fake;
        ComparePresenter p(fake, *m_catalog);
        QSignalSpy text(&p, &ComparePresenter::continuationText);
        QSignalSpy done(&p, &ComparePresenter::continuationsFinished);
        std::array<ContinuationSetting, 2> s{ContinuationSetting{"/m/a", 32, 0},
                                             ContinuationSetting{"/m/a", 32, 32}};
        QVERIFY(!p.continueBoth("Once", s, 20)); // o = T for B
        s[1].overlap = 8;
        QVERIFY(p.continueBoth("Once", s, 20));
        const auto a = fake.jobs[fake.jobOf("generate", 0)].generate;
        const auto b = fake.jobs[fake.jobOf("generate", 1)].generate;
        QCOMPARE(a.sampling.seed, b.sampling.seed);
        QCOMPARE(a.windows.overlap, 0);
        QCOMPARE(b.windows.overlap, 8);
        QCOMPARE(b.sampling.maxTokens, 20);
        engine::GenerationProgress g;
        g.text = " upon";
        fake.generationProgress(fake.jobOf("generate", 1), g);
        QCOMPARE(text.last().at(0).toInt(), 1);
        QCOMPARE(text.last().at(1).toString(), QString(" upon"));
        for (const auto& [id, j] : fake.jobs)
            fake.jobFinished(id, true, {});
        QCOMPARE(done.count(), 1);
    }

    void splitHoldsOutTheEnd() {
        std::string text;
        for (int i = 0; i < 100; ++i)
            text += "Paragraph " + std::to_string(i) + " of a book.\n\n";
        auto [train, validation] = splitForValidation(text);
        QCOMPARE(train + validation, text);
        QVERIFY(validation.rfind("\n\n", 0) == 0); // cut at a paragraph break
        QVERIFY(train.size() >= text.size() * 9 / 10);
        // Never inside a character.
        const std::string accents(1000, 'a');
        std::string utf8;
        for (int i = 0; i < 500; ++i)
            utf8 += "\xc3\xa9"; // é
        auto [t2, v2] = splitForValidation(utf8);
        QCOMPARE(t2.size() % 2, size_t(0));
        QCOMPARE(t2 + v2, utf8);
    }

    void fineTuneImportsTextAndEpub() {
        FakeLabBackend fake;
        FineTunePresenter p(fake, *m_catalog);
        QSignalSpy failed(&p, &FineTunePresenter::failed);
        const QString good = m_tmp.filePath("good.txt"), latin = m_tmp.filePath("latin.txt"),
                      empty = m_tmp.filePath("empty.md");
        QVERIFY(baton::test::writeFile(good, "It is a truth universally acknowledged."));
        QVERIFY(baton::test::writeFile(latin, "caf\xe9"));
        QVERIFY(baton::test::writeFile(empty, "  \n"));
        p.importBooks({good, latin, empty, m_tmp.filePath("missing.txt")});
        QCOMPARE(fake.stored.size(), size_t(1));
        QCOMPARE(fake.stored[0].title, std::string("good"));
        QCOMPARE(p.books().size(), size_t(1)); // refreshed after adding
        QCOMPARE(failed.count(), 1);
        const auto detail = failed.at(0).at(1).value<ErrorText>().detail;
        QVERIFY(detail.contains("latin.txt") && detail.contains("empty.md") &&
                detail.contains("missing.txt"));
        p.removeBooks({fake.stored[0].id});
        QVERIFY(p.books().empty());

        // EPUB: the book's title and its chapters' text; a DRM-protected one is refused.
        namespace epub = baton::test::epub;
        const QString book = m_tmp.filePath("tern.epub"), locked = m_tmp.filePath("locked.epub");
        QVERIFY(epub::writeZip(book.toStdString(), epub::goodBook()));
        QVERIFY(epub::writeZip(locked.toStdString(),
                               epub::with(epub::goodBook(), "META-INF/rights.xml", "<r/>")));
        p.importBooks({book, locked});
        QCOMPARE(fake.stored.size(), size_t(1)); // the earlier book was removed
        QCOMPARE(fake.stored[0].title, std::string("The Voyage of the Tern"));
        QVERIFY(fake.stored[0].text.find("Hoist the sail") != std::string::npos);
        QVERIFY(fake.stored[0].text.find('<') == std::string::npos);
        QCOMPARE(failed.count(), 2);
        QVERIFY(failed.at(1).at(1).value<ErrorText>().detail.contains("DRM"));

        // A library shard: each work a book, titled by its file; an empty work named.
        p.removeBooks({fake.stored[0].id});
        namespace tar = baton::test::tar;
        const QString shard = m_tmp.filePath("library-01.tar.xz");
        QVERIFY(baton::test::writeFile(
            shard, QByteArray::fromStdString(tar::xz(tar::archive(
                       {{"cbm/Author - First Work.txt", "It was a dark night.\n"},
                        {"cbm/Blank.txt", "\n\n"},
                        {"cbm/Author - Second Work.md", "# One\nThe second work.\n"}})))));
        fake.readProgress.clear();
        p.importBooks({shard});
        QCOMPARE(fake.stored.size(), size_t(2));
        QCOMPARE(fake.stored[0].title, std::string("Author - First Work"));
        QCOMPARE(fake.stored[1].text, std::string("# One\nThe second work.\n"));
        QVERIFY(QString::fromStdString(fake.stored[1].sourcePath)
                    .endsWith("library-01.tar.xz/cbm/Author - Second Work.md"));
        QCOMPARE(failed.count(), 3);
        QVERIFY(failed.at(2).at(1).value<ErrorText>().detail.contains("cbm/Blank.txt is empty"));
        // Progress by bytes read, rising to 1, shown as the presenter's progress.
        QVERIFY(fake.readProgress.size() >= 2);
        QVERIFY(std::is_sorted(fake.readProgress.begin(), fake.readProgress.end()));
        QCOMPARE(fake.readProgress.back(), 1.0);
        QVERIFY(!p.importing());

        // The reader stops at the next file once cancelled, and keeps none of it.
        engine::CancelToken token;
        int reports = 0;
        const auto part = ui::readBookFiles({good, shard}, token, [&](double, const QString&) {
            if (++reports == 2)
                token.cancel(); // as the second file starts: the first is dropped too
        });
        QVERIFY(part.cancelled);
        QVERIFY(part.books.empty());

        // Cancelled while reading: nothing is added, and the status says so.
        QSignalSpy status(&p, &FineTunePresenter::status);
        fake.cancelReads = true;
        p.importBooks({shard, book});
        QCOMPARE(fake.stored.size(), size_t(2));
        QVERIFY(!p.importing());
        QVERIFY(status.last().at(0).toString().contains("cancelled"));
        QCOMPARE(failed.count(), 3);
    }

    void fineTuneRunsRecordsAndFinishes() {
        FakeLabBackend fake;
        FineTunePresenter p(fake, *m_catalog);
        QSignalSpy status(&p, &FineTunePresenter::status);
        QSignalSpy done(&p, &FineTunePresenter::runFinished);
        QJsonObject s{{"base", "/m/base"}, {"mode", "recurrent"}, {"scope", "all"},  {"window", 32},
                      {"overlap", 0},      {"bptt_windows", 4},   {"batch_size", 2}, {"lr", 1e-4},
                      {"epochs", 1.0},     {"name", "my model"}};
        QVERIFY(!p.start(s));
        QVERIFY(status.last().at(0).toString().contains("book"));
        std::string book;
        for (int i = 0; i < 50; ++i)
            book += "A paragraph of the book.\n\n";
        fake.stored.push_back({1, "Book", "", "sum", book, int64_t(book.size()), 0});
        p.refresh();
        QVERIFY(!p.start(s)); // no runs folder yet
        p.setRunsFolder(m_tmp.filePath("runs"));
        QJsonObject bad = s;
        bad["overlap"] = 32;
        QVERIFY(!p.start(bad));
        QVERIFY(p.start(s));
        QVERIFY(p.running());
        const auto& c = fake.jobs[fake.jobOf("train")].train;
        QCOMPARE(c.mode, engine::TrainMode::Recurrent);
        QCOMPARE(c.window, 32);
        QCOMPARE(c.bpttWindows, 4);
        QCOMPARE(c.corpusTexts.size(), size_t(1));
        QCOMPARE(c.corpusTexts[0].second + c.validationTexts[0].second, book);
        QVERIFY(QString::fromStdString(c.outDir).contains("my-model")); // a safe name
        QCOMPARE(fake.runList.size(), size_t(1));
        const engine::JobId job = fake.jobOf("train");
        engine::TrainEvent e;
        e.kind = engine::TrainEvent::Kind::Step;
        e.totalSteps = 10;
        for (int step = 1; step <= 10; ++step) {
            e.step = step;
            e.loss = 5.0 - step * 0.1;
            fake.trainingEvent(job, e);
        }
        QCOMPARE(p.loss().size(), size_t(10));
        engine::TrainEvent v;
        v.kind = engine::TrainEvent::Kind::Validation;
        v.step = 10;
        v.valPerplexity = 80;
        v.valLossNoState = std::log(85.0);
        fake.trainingEvent(job, v);
        QCOMPARE(p.validation().size(), size_t(1));
        QCOMPARE(p.validationNoState().size(), size_t(1));
        engine::TrainEvent ck;
        ck.kind = engine::TrainEvent::Kind::Checkpoint;
        ck.step = 10;
        fake.trainingEvent(job, ck);
        QCOMPARE(fake.metricCalls.size(), size_t(1)); // losses at steps 5 and 10, two vals
        QCOMPARE(fake.metricCalls[0].size(), size_t(4));
        engine::TrainEvent fin;
        fin.kind = engine::TrainEvent::Kind::Done;
        fin.checkpoint = "/runs/my-model/model";
        fake.trainingEvent(job, fin);
        fake.jobFinished(job, true, {});
        QCOMPARE(done.count(), 1);
        QVERIFY(done.at(0).at(0).toBool());
        QCOMPARE(fake.finished.size(), size_t(1));
        QCOMPARE(std::get<1>(fake.finished[0]), std::string("/runs/my-model/model"));
        QCOMPARE(std::get<2>(fake.finished[0]), storage::RunStatus::Completed);
        QCOMPARE(p.finishedModel(), QString("/runs/my-model/model"));
    }

    void recurrencePresetFollowsTheModelsSize() {
        const CatalogModel mini = shaped("/m/baton-mini-baseline", 4, 256, 256, 8000);
        QJsonObject s = recurrencePreset(mini);
        QCOMPARE(s["base"].toString(), mini.path);
        QCOMPARE(s["mode"].toString(), QStringLiteral("recurrent"));
        QCOMPARE(s["scope"].toString(), QStringLiteral("adapter"));
        QCOMPARE(s["window"].toInt(), 128);
        QCOMPARE(s["overlap"].toInt(), 0);
        QCOMPARE(s["bptt_windows"].toInt(), 20);
        QCOMPARE(s["name"].toString(), QStringLiteral("baton-mini-baseline-recurrence"));
        s = recurrencePreset(shaped("/m/gpt2", 12, 768, 1024, 50257));
        QCOMPARE(s["window"].toInt(), 256);
        QCOMPARE(s["bptt_windows"].toInt(), 8);
        QCOMPARE(recurrencePreset(shaped("/m/short", 4, 256, 64, 8000))["window"].toInt(), 64);
    }

    void anAdapterRunTrainsTheModuleAloneAndMeasuresItOnItsBase() {
        FakeLabBackend fake;
        FineTunePresenter p(fake, *m_catalog);
        QSignalSpy status(&p, &FineTunePresenter::status);
        std::string book;
        for (int i = 0; i < 50; ++i)
            book += "A paragraph of the book.\n\n";
        fake.stored.push_back({1, "Book", "", "sum", book, int64_t(book.size()), 0});
        p.refresh();
        p.setRunsFolder(m_tmp.filePath("runs-adapter"));
        QJsonObject s = recurrencePreset(shaped("/m/base", 4, 256, 256, 8000));
        s["name"] = QString();
        QJsonObject baseline = s;
        baseline["mode"] = "baseline";
        QVERIFY(!p.start(baseline)); // an adapter is recurrent
        QVERIFY(status.last().at(0).toString().contains("recurrent"));
        QVERIFY(p.start(s));
        const engine::JobId job = fake.jobOf("train");
        const auto& c = fake.jobs[job].train;
        QVERIFY(c.adapter);
        QCOMPARE(c.mode, engine::TrainMode::Recurrent);
        QCOMPARE(c.scope, engine::TrainScope::Recurrence);
        QCOMPARE(c.recurrence.slots, kAdapterSlots);
        QCOMPARE(c.baseModel, std::string("/m/base"));
        QVERIFY(QString::fromStdString(c.outDir).contains("base-recurrence"));
        // Before: the base alone; after: the base with the adapter.
        const engine::JobId before = fake.jobOf("load");
        QCOMPARE(fake.jobs[before].model, QStringLiteral("/m/base"));
        QVERIFY(fake.jobs[before].adapter.isEmpty());
        fake.jobFinished(before, true, {});
        const engine::JobId eval = fake.jobOf("evaluate");
        fake.evaluationRow(eval, row(128, 0, 400), true);
        fake.jobFinished(eval, true, {});
        QVERIFY(p.heldOutBefore().valid());
        engine::TrainEvent fin;
        fin.kind = engine::TrainEvent::Kind::Done;
        fin.checkpoint = "/runs/base-recurrence/adapter";
        fake.trainingEvent(job, fin);
        fake.jobFinished(job, true, {});
        QCOMPARE(p.finishedModel(), QStringLiteral("/runs/base-recurrence/adapter"));
        const engine::JobId after = fake.jobOf("load", 1);
        QVERIFY(after != 0);
        QCOMPARE(fake.jobs[after].model, QStringLiteral("/m/base"));
        QCOMPARE(fake.jobs[after].adapter, QStringLiteral("/runs/base-recurrence/adapter"));
    }

    void fineTuneCancelsAndResumes() {
        FakeLabBackend fake;
        FineTunePresenter p(fake, *m_catalog);
        p.setRunsFolder(m_tmp.filePath("runs2"));
        fake.stored.push_back({1, "Book", "", "sum", std::string(5000, 'x'), 5000, 0});
        p.refresh();
        QJsonObject s{{"base", "/m/base"}, {"mode", "baseline"}, {"window", 32},  {"overlap", 0},
                      {"batch_size", 2},   {"lr", 1e-4},         {"epochs", 1.0}, {"name", "b"}};
        QVERIFY(p.start(s));
        const engine::JobId job = fake.jobOf("train");
        QCOMPARE(fake.jobs[job].train.bpttWindows, 1); // a baseline
        // The base model's held-out measurement is queued before the training; both
        // are cancelled.
        const engine::JobId load = fake.jobOf("load"), eval = fake.jobOf("evaluate");
        QVERIFY(load && eval && load < job && eval < job);
        fake.jobFinished(load, true, {});
        fake.evaluationRow(eval, row(32, 0, 500), true);
        fake.jobFinished(eval, true, {});
        QVERIFY(p.heldOutBefore().valid());
        engine::TrainEvent step;
        step.kind = engine::TrainEvent::Kind::Step;
        step.step = 1;
        step.totalSteps = 100;
        fake.trainingEvent(job, step);
        QSignalSpy status(&p, &FineTunePresenter::status);
        p.cancel();
        QCOMPARE(fake.cancelled, std::vector<engine::JobId>{job});
        fake.jobFinished(job, false, {engine::ErrorCode::Cancelled, "cancelled"});
        QVERIFY(!p.running());
        // No checkpoint came: the status does not promise one (issue 65).
        QVERIFY2(status.last().at(0).toString().contains("starts the run again"),
                 qPrintable(status.last().at(0).toString()));
        QCOMPARE(std::get<2>(fake.finished[0]), storage::RunStatus::Cancelled);
        // The run can be resumed while its folder is there.
        fake.runList[0].status = storage::RunStatus::Cancelled;
        const QString outDir = QString::fromStdString(fake.jobs[job].train.outDir);
        QVERIFY(QDir().mkpath(outDir));
        p.refresh();
        QVERIFY(p.canResume());
        fake.metrics = {{1, 5, "train_loss", 4.0},
                        {1, 5, "val_ppl", 90.0},
                        {1, 0, "heldout_nll_base", 500.0},
                        {1, 0, "heldout_tokens_base", 100.0}};
        QSignalSpy restored(&p, &FineTunePresenter::settingsRestored);
        QVERIFY(p.resume());
        QCOMPARE(restored.count(), 1);
        QCOMPARE(restored.at(0).at(0).toJsonObject()["name"].toString(), QString("b"));
        QCOMPARE(p.loss().size(), size_t(1));
        QCOMPARE(p.validation().size(), size_t(1));
        const auto& resumed = fake.jobs[fake.jobOf("train", 1)].train;
        QVERIFY(resumed.resume);
        QCOMPARE(QString::fromStdString(resumed.outDir), outDir);
        QVERIFY(resumed.corpusTexts.empty()); // the run's folder holds them
        // The base model's figure came back with the metrics: not measured again.
        QCOMPARE(p.heldOutBefore().tokens, int64_t(100));
        QCOMPARE(fake.jobOf("evaluate", 1), engine::JobId(0));
        // The run goes on from its checkpoint at step 3: the chart takes back what it
        // held after it instead of drawing a line back.
        const engine::JobId again = fake.jobOf("train", 1);
        step.step = 4;
        fake.trainingEvent(again, step);
        QCOMPARE(p.loss().size(), size_t(1));
        QCOMPARE(p.loss().front().x(), 4.0);
        QVERIFY(p.validation().empty());
        engine::TrainEvent checkpoint;
        checkpoint.kind = engine::TrainEvent::Kind::Checkpoint;
        checkpoint.step = 4;
        fake.trainingEvent(again, checkpoint);
        p.cancel();
        fake.jobFinished(again, false, {engine::ErrorCode::Cancelled, "cancelled"});
        QVERIFY2(status.last().at(0).toString().contains("checkpoint at step 4"),
                 qPrintable(status.last().at(0).toString()));
    }

    // A run scores the held-out end of the books with the base model before training
    // and with the fine-tuned model after it: the same text, the same windows.
    void fineTuneMeasuresTheHeldOutTextBeforeAndAfter() {
        FakeLabBackend fake;
        FineTunePresenter p(fake, *m_catalog);
        p.setRunsFolder(m_tmp.filePath("runs3"));
        std::string book;
        for (int i = 0; i < 60; ++i)
            book += "Paragraph " + std::to_string(i) + " of the book,\nhard-wrapped.\n\n";
        fake.stored.push_back({1, "Book", "", "sum", book, int64_t(book.size()), 0});
        p.refresh();
        QSignalSpy done(&p, &FineTunePresenter::runFinished);
        QSignalSpy progress(&p, &FineTunePresenter::progress);
        QSignalSpy heldOut(&p, &FineTunePresenter::heldOutChanged);
        QJsonObject s{{"base", "/m/base"}, {"mode", "recurrent"}, {"scope", "all"},  {"window", 32},
                      {"overlap", 8},      {"bptt_windows", 2},   {"batch_size", 2}, {"lr", 1e-4},
                      {"epochs", 1.0},     {"name", "held"}};
        QVERIFY(p.start(s));
        const engine::JobId train = fake.jobOf("train");
        const engine::JobId load = fake.jobOf("load"), eval = fake.jobOf("evaluate");
        QVERIFY(load < eval && eval < train); // queued before the training
        QCOMPARE(fake.jobs[load].model, QString("/m/base"));
        const auto& c = fake.jobs[train].train;
        const engine::EvaluateRequest before = fake.jobs[eval].evaluate;
        // The held-out end, as the trainer reads it (unwrapped), never in the corpus.
        QCOMPARE(before.text, engine::unwrapText(c.validationTexts[0].second));
        QCOMPARE(before.text, heldOutTexts(fake.stored).at(0));
        QVERIFY(before.text.find("Paragraph 59 of the book,") != std::string::npos);
        QVERIFY(c.corpusTexts[0].second.find("Paragraph 59") == std::string::npos);
        QCOMPARE(before.settings.size(), size_t(1));
        QCOMPARE(before.settings[0].window, 32);
        QCOMPARE(before.settings[0].overlap, 8);
        fake.jobFinished(load, true, {});
        fake.jobProgress(eval, 0.5, QString());
        QCOMPARE(progress.last().at(0).toDouble(), 0.5);
        fake.evaluationRow(eval, row(32, 8, 400), true);  // perplexity e^4
        fake.evaluationRow(eval, row(32, 8, 999), false); // state off: not counted
        fake.jobFinished(eval, true, {});
        QVERIFY(heldOut.count() >= 1);
        QCOMPARE(p.heldOutBefore().tokens, int64_t(100));
        QVERIFY(qAbs(p.heldOutBefore().perplexity() - std::exp(4.0)) < 1e-9);
        QVERIFY2(p.heldOutSummary().contains("base model 54.60"), qPrintable(p.heldOutSummary()));
        QVERIFY(p.heldOutSummary().contains("measured when training ends"));

        engine::TrainEvent e;
        e.kind = engine::TrainEvent::Kind::Step;
        e.step = e.totalSteps = 3;
        e.loss = 3;
        fake.trainingEvent(train, e);
        engine::TrainEvent fin;
        fin.kind = engine::TrainEvent::Kind::Done;
        fin.checkpoint = "/runs/held/model";
        fake.trainingEvent(train, fin);
        fake.jobFinished(train, true, {});
        // The base model's figure is stored with the run.
        QCOMPARE(fake.metricCalls.size(), size_t(1));
        const auto stored = fake.metricCalls[0];
        QVERIFY(std::any_of(stored.begin(), stored.end(), [](const storage::MetricPoint& m) {
            return m.name == "heldout_nll_base" && m.value == 400;
        }));
        // Not finished yet: the fine-tuned model on the same text, with the same windows.
        QCOMPARE(done.count(), 0);
        QVERIFY(p.running());
        const engine::JobId load2 = fake.jobOf("load", 1), eval2 = fake.jobOf("evaluate", 1);
        QVERIFY(load2 > train && eval2 > load2);
        QCOMPARE(fake.jobs[load2].model, QString("/runs/held/model"));
        QCOMPARE(fake.jobs[eval2].evaluate.text, before.text);
        QCOMPARE(fake.jobs[eval2].evaluate.settings[0].window, 32);
        QCOMPARE(fake.jobs[eval2].evaluate.settings[0].overlap, 8);
        fake.jobFinished(load2, true, {});
        fake.evaluationRow(eval2, row(32, 8, 300), true); // e^3
        fake.jobFinished(eval2, true, {});
        QCOMPARE(done.count(), 1);
        QVERIFY(done.at(0).at(0).toBool());
        QVERIFY(!p.running());
        QVERIFY(qAbs(p.heldOutAfter().perplexity() - std::exp(3.0)) < 1e-9);
        QVERIFY2(
            p.heldOutSummary().contains("base model 54.60 → fine-tuned 20.09 (−63.2%, better)"),
            qPrintable(p.heldOutSummary()));
        QCOMPARE(fake.metricCalls.back().front().name, std::string("heldout_nll"));
    }

    // Cancel while the base model is measured: the training queued after it goes too.
    void fineTuneCancelsBeforeTrainingBegins() {
        FakeLabBackend fake;
        FineTunePresenter p(fake, *m_catalog);
        p.setRunsFolder(m_tmp.filePath("runs4"));
        fake.stored.push_back({1, "Book", "", "sum", std::string(5000, 'y'), 5000, 0});
        p.refresh();
        QSignalSpy done(&p, &FineTunePresenter::runFinished);
        QSignalSpy status(&p, &FineTunePresenter::status);
        QJsonObject s{{"base", "/m/base"}, {"mode", "baseline"}, {"window", 32},  {"overlap", 0},
                      {"batch_size", 2},   {"lr", 1e-4},         {"epochs", 1.0}, {"name", "c"}};
        QVERIFY(p.start(s));
        QVERIFY(status.last().at(0).toString().contains("held-out"));
        p.cancel();
        std::vector<engine::JobId> all;
        for (const auto& [id, j] : fake.jobs)
            all.push_back(id);
        auto cancelled = fake.cancelled;
        std::sort(cancelled.begin(), cancelled.end());
        QCOMPARE(cancelled, all); // load, evaluation and training
        for (engine::JobId id : all)
            fake.jobFinished(id, false, {engine::ErrorCode::Cancelled, "cancelled"});
        QCOMPARE(done.count(), 1);
        QVERIFY(!done.at(0).at(0).toBool());
        QVERIFY(!p.running());
        QVERIFY(!p.heldOutBefore().valid());
        QCOMPARE(status.last().at(0).toString(), QString("Cancelled before training began."));
    }

    // A base model that cannot be loaded: its evaluation is cancelled (it would score
    // whatever model the engine holds), no figure is shown, the run goes on.
    void aFailedMeasurementIsDropped() {
        FakeLabBackend fake;
        FineTunePresenter p(fake, *m_catalog);
        p.setRunsFolder(m_tmp.filePath("runs5"));
        fake.stored.push_back({1, "Book", "", "sum", std::string(5000, 'z'), 5000, 0});
        p.refresh();
        QSignalSpy log(&p, &FineTunePresenter::logLine);
        QJsonObject s{{"base", "/m/gone"}, {"mode", "baseline"}, {"window", 32},  {"overlap", 0},
                      {"batch_size", 2},   {"lr", 1e-4},         {"epochs", 1.0}, {"name", "f"}};
        QVERIFY(p.start(s));
        const engine::JobId load = fake.jobOf("load"), eval = fake.jobOf("evaluate");
        fake.jobFinished(load, false, {engine::ErrorCode::FileNotFound, "no such folder"});
        QCOMPARE(fake.cancelled, std::vector<engine::JobId>{eval});
        fake.jobFinished(eval, false, {engine::ErrorCode::Cancelled, "cancelled"});
        QVERIFY(!p.heldOutBefore().valid());
        QVERIFY(p.heldOutSummary().isEmpty());
        QVERIFY(log.last().at(0).toString().contains("no such folder"));
        QVERIFY(p.running()); // the training job is still queued
        QVERIFY(std::find(fake.cancelled.begin(), fake.cancelled.end(), fake.jobOf("train")) ==
                fake.cancelled.end());
    }

    void heldOutTextsShareTheBudget() {
        std::vector<storage::Book> books(3);
        books[0].text = std::string(9000, 'a') + "\n\n" + std::string(1000, 'b');
        books[1].text = "short\n\n   \n"; // its held-out end is blank: left out
        for (int i = 0; i < 3000; ++i)
            books[2].text += "\xc3\xa9"; // é, 6000 bytes
        const auto texts = heldOutTexts(books, 700);
        QCOMPARE(texts.size(), size_t(2));
        QVERIFY(texts[0].size() <= 350 && texts[0].find('b') != std::string::npos);
        QVERIFY(texts[1].size() <= 350 && texts[1].size() % 2 == 0); // whole characters
        QVERIFY(!texts[1].empty());
    }
};

QTEST_MAIN(TestLabPresenters)
#include "tst_lab_presenters.moc"
