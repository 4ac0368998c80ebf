// The app's lab pages driven through their real widgets, offscreen, with the fixture
// model: Models (the bundled list, importing a good and a broken folder, the default,
// writing with a model), Fine-tune (books by import with invalid UTF-8 refused, a
// recurrent run with live charts that registers its model, cancel and resume), and
// Compare overlaps (the baseline fixture against the fine-tuned recurrent model on a
// grid of overlaps, stored and reopened; cancel; side-by-side continuations).
// Each page writes a screenshot to the build tree. (The event loop's liveness while
// generating and training: tst_lab_latency.)
#include "app_harness.h"
#include "test_support.h"
#include "widget_checks.h"

#include "bar_chart.h"
#include "compare_panel.h"
#include "finetune_panel.h"
#include "line_chart.h"
#include "model_catalog.h"
#include "models_panel.h"
#include "probe_panel.h"
#include "topics_panel.h"

#include <baton/engine/qt/model_jobs.h>
#include <baton/storage/database.h>
#include <baton/storage/eval_store.h>
#include <baton/storage/model_store.h>
#include <baton/storage/qt/storage_controller.h>
#include <baton/storage/run_store.h>
#include <baton/storage/topic_store.h>
#include <baton/ui/main_window.h>

#include "story_editor.h"
#include "story_notes_panel.h"
#include "story_session.h"
#include "window_ruler.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest>

#include <algorithm>
#include <memory>

using namespace baton;
using ui::MainWindow;

class TestLabPages : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_db;
    test::AppHarness m_app;
    QString m_bundled; // a copy of the fixture standing in for a bundled model
    QString m_book;
    QString m_fineTuned;

    void screenshot(const QString& name) { m_app.screenshot(name); }

    std::unique_ptr<storage::Database> openDb() {
        if (!m_app.flush())
            return nullptr;
        return test::AppHarness::openReadOnly(m_db);
    }

    void closeErrorDialogs() {
        for (auto* box : m_app.window->findChildren<QMessageBox*>(QStringLiteral("errorDialog")))
            box->close();
        QCoreApplication::processEvents();
    }

private Q_SLOTS:
    void initTestCase() {
        test::initTestProcess();
        QVERIFY(m_tmp.isValid());
        QVERIFY2(QFileInfo::exists(test::fixtureDir() + "/config.json"),
                 qPrintable(test::missingMessage(test::fixtureDir())));
        m_db = m_tmp.path() + "/lab.db";
        m_bundled = m_tmp.path() + "/bundled/tiny";
        QVERIFY(test::copyFolder(test::fixtureDir(), m_bundled));
        // A small book: the start of Emma.
        const QByteArray emma =
            test::readFile(test::sharedPath("corpus/books/austen-emma.txt")).mid(2000, 12000);
        QVERIFY2(!emma.isEmpty(), qPrintable(test::missingMessage("corpus/books")));
        m_book = m_tmp.path() + "/emma-start.txt";
        QVERIFY(test::writeFile(m_book, emma));

        m_app.start(m_db, QStringList{m_bundled});
        if (QTest::currentTestFailed())
            return;
        QTRY_VERIFY(m_app.window->catalog()->loaded());
    }

    void modelsListImportsAndSetsTheDefault() {
        m_app.window->showPage(MainWindow::Page::Models);
        ui::ModelCatalog* catalog = m_app.window->catalog();
        // The bundled model is registered and is the default.
        QCOMPARE(catalog->models().size(), size_t(1));
        QVERIFY(catalog->models()[0].bundled);
        QVERIFY(catalog->models()[0].isDefault);
        QCOMPARE(catalog->models()[0].layers, 2);
        QCOMPARE(catalog->models()[0].width, 64);

        // A folder whose weights are cut short is refused with the loader's reason.
        const QString broken = m_tmp.path() + "/broken";
        QVERIFY(test::copyFolder(test::fixtureDir(), broken));
        {
            QFile f(broken + "/model.safetensors");
            QVERIFY(f.open(QIODevice::ReadWrite));
            QVERIFY(f.resize(f.size() / 2));
        }
        ui::ModelsPanel* panel = m_app.window->modelsPanel();
        QSignalSpy finished(panel, &ui::ModelsPanel::importFinished);
        QSignalSpy failed(panel, &ui::ModelsPanel::failed);
        panel->importFolder(broken);
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.at(0).at(0).toBool(), false);
        QCOMPARE(failed.count(), 1);
        QVERIFY(!failed.at(0).at(1).value<ui::ErrorText>().message.isEmpty());
        QTRY_VERIFY(m_app.window->findChild<QMessageBox*>(QStringLiteral("errorDialog")));
        closeErrorDialogs();
        QCOMPARE(catalog->models().size(), size_t(1));

        // A good folder is registered.
        const QString good = m_tmp.path() + "/imported-gpt2";
        QVERIFY(test::copyFolder(test::fixtureDir(), good));
        QSignalSpy changed(catalog, &ui::ModelCatalog::changed);
        panel->importFolder(good);
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.last().at(0).toBool(), true);
        QTRY_COMPARE(catalog->models().size(), size_t(2));
        auto imported = catalog->byPath(good);
        QVERIFY(imported.has_value());
        QVERIFY(!imported->bundled);

        // Set it as the default (stored), then use it for writing.
        catalog->setDefault(imported->id);
        QTRY_VERIFY(catalog->byPath(good)->isDefault);
        QVERIFY(!catalog->byPath(m_bundled)->isDefault);
        {
            auto db = openDb();
            QVERIFY(db);
            auto def = db->models().defaultModel();
            QVERIFY(def.ok() && def->has_value());
            QCOMPARE(QString::fromStdString((*def)->path), QDir(good).absolutePath());
        }
        QSignalSpy ready(m_app.window.get(), &MainWindow::modelReady);
        panel->selectPath(QDir(good).absolutePath());
        QCOMPARE(panel->selectedPath(), QDir(good).absolutePath());
        Q_EMIT panel->useRequested(panel->selectedPath());
        QVERIFY(ready.wait(60000));
        QCOMPARE(QString::fromStdString(m_app.engine->model()->path), QDir(good).absolutePath());
        QCOMPARE(m_app.engine->model()->weights, engine::WeightFormat::F32);

        // The weights option reloads the writing model with 8-bit, then 4-bit weights
        // (remembered), and back.
        auto* weights = panel->findChild<QComboBox*>(QStringLiteral("modelWeights"));
        QVERIFY(weights);
        const auto choose = [&](engine::WeightFormat f) {
            weights->setCurrentIndex(weights->findData(int(f)));
            Q_EMIT weights->activated(weights->currentIndex());
        };
        const auto held = [&] { return m_app.engine->model()->weights; };
        choose(engine::WeightFormat::Int8);
        QTRY_COMPARE_WITH_TIMEOUT(held(), engine::WeightFormat::Int8, 60000);
        QCOMPARE(QString::fromStdString(m_app.engine->model()->path), QDir(good).absolutePath());
        QCOMPARE(QSettings().value(QStringLiteral("model/weights")).toString(),
                 QStringLiteral("int8"));
        m_app.window->showPage(MainWindow::Page::Models);
        QTest::qWait(50);
        screenshot(QStringLiteral("models-int8.png"));
        choose(engine::WeightFormat::Q4);
        QTRY_COMPARE_WITH_TIMEOUT(held(), engine::WeightFormat::Q4, 60000);
        QCOMPARE(QSettings().value(QStringLiteral("model/weights")).toString(),
                 QStringLiteral("q4"));
        QTest::qWait(50);
        screenshot(QStringLiteral("models-q4.png"));
        // A choice made while the model loads applies when that load finishes.
        Q_EMIT panel->useRequested(QDir(good).absolutePath());
        choose(engine::WeightFormat::F32);
        QTRY_COMPARE_WITH_TIMEOUT(held(), engine::WeightFormat::F32, 60000);
        m_app.window->showPage(MainWindow::Page::Models);
        QTest::qWait(50);
        screenshot(QStringLiteral("models.png"));
    }

    void fineTuneImportsBooksTrainsAndRegisters() {
        m_app.window->showPage(MainWindow::Page::FineTune);
        ui::FineTunePanel* panel = m_app.window->fineTunePanel();
        // No book yet: the list's place says how to add one and which files can be; no
        // empty progress bar.
        auto* hint = panel->findChild<QLabel*>(QStringLiteral("bookHint"));
        auto* progress = panel->findChild<QProgressBar*>(QStringLiteral("fineTuneProgress"));
        QVERIFY(hint && hint->isVisible());
        for (const char* says : {"Add books", ".txt", ".md", ".epub", "drop"})
            QVERIFY2(hint->text().contains(QLatin1String(says)), says);
        QVERIFY(!panel->findChild<QListWidget*>(QStringLiteral("bookList"))->isVisible());
        QVERIFY(!progress->isVisible());
        QTRY_VERIFY(test::showsWhole(panel->findChild<QComboBox*>(QStringLiteral("fineTuneBase"))));
        screenshot(QStringLiteral("finetune_empty.png"));
        // Invalid UTF-8 is refused with the file named; the good book is stored.
        const QString bad = m_tmp.path() + "/latin1.txt";
        QVERIFY(test::writeFile(bad, QByteArray("caf\xe9 au lait\n")));
        QSignalSpy failed(panel, &ui::FineTunePanel::failed);
        QSignalSpy books(panel, &ui::FineTunePanel::booksChanged);
        panel->importBooks({m_book, bad}); // read off the GUI thread
        QTRY_COMPARE(failed.count(), 1);
        QVERIFY(failed.at(0).at(1).value<ui::ErrorText>().detail.contains("latin1.txt"));
        closeErrorDialogs();
        QTRY_COMPARE(panel->bookCount(), 1);
        QVERIFY(!books.isEmpty());
        QVERIFY(!hint->isVisible());
        QVERIFY(panel->findChild<QListWidget*>(QStringLiteral("bookList"))->isVisible());

        QJsonObject s;
        s["base"] = QDir(m_bundled).absolutePath();
        s["mode"] = "recurrent";
        s["scope"] = "all";
        s["window"] = 32;
        s["overlap"] = 0;
        s["bptt_windows"] = 2;
        s["batch_size"] = 2;
        s["lr"] = 1e-3;
        // Three epochs (about 60 steps): Cancel at the first step finds the run going
        // with a wide margin (one epoch took about 1 s here).
        s["epochs"] = 3.0;
        s["name"] = "emma tiny";
        panel->setSettings(s);
        QCOMPARE(panel->settings()["window"].toInt(), 32);

        // Start, cancel at the first step: a checkpoint is kept and Resume is offered.
        QSignalSpy done(panel, &ui::FineTunePanel::runFinished);
        QVERIFY(panel->start());
        QTRY_VERIFY(progress->isVisible()); // once the books are read and the run recorded
        QTRY_VERIFY_WITH_TIMEOUT(panel->lossPoints() >= 1, 120000);
        // The base model was measured on the held-out end of the book first.
        QVERIFY(panel->presenter().heldOutBefore().valid());
        panel->cancel();
        QVERIFY(done.wait(120000));
        QCOMPARE(done.at(0).at(0).toBool(), false);
        QVERIFY(!progress->isVisible());
        QTRY_VERIFY(panel->canResume());
        {
            auto db = openDb();
            auto runs = db->runs().list();
            QVERIFY(runs.ok());
            QCOMPARE(runs->size(), size_t(1));
            QCOMPARE(runs->front().status, storage::RunStatus::Cancelled);
        }

        // Resume to the end: the loss and validation charts fill, the model registers.
        QVERIFY(panel->resume());
        QVERIFY(done.wait(300000));
        QCOMPARE(done.last().at(0).toBool(), true);
        QVERIFY(panel->lossPoints() > 1);
        QVERIFY(panel->validationPoints() >= 1);
        // Before and after on the same held-out text: the base model's figure kept
        // from the first launch, the fine-tuned model's measured after training.
        const auto& before = panel->presenter().heldOutBefore();
        const auto& after = panel->presenter().heldOutAfter();
        QVERIFY(before.valid() && after.valid());
        QCOMPARE(after.tokens, before.tokens);
        QVERIFY(before.perplexity() > 1 && after.perplexity() > 1);
        auto* heldOut = panel->findChild<QLabel*>(QStringLiteral("fineTuneHeldOut"));
        QVERIFY(heldOut->isVisible());
        QVERIFY2(heldOut->text().contains(QStringLiteral("base model %1 → fine-tuned %2")
                                              .arg(before.perplexity(), 0, 'f', 2)
                                              .arg(after.perplexity(), 0, 'f', 2)),
                 qPrintable(heldOut->text()));
        m_fineTuned = panel->finishedModel();
        QVERIFY(QFileInfo::exists(m_fineTuned + "/baton.json"));
        QTRY_VERIFY(m_app.window->catalog()->byPath(m_fineTuned).has_value());
        QVERIFY(m_app.window->catalog()->byPath(m_fineTuned)->recurrent);
        QCOMPARE(m_app.window->catalog()->byPath(m_fineTuned)->window, 32);
        auto db = openDb();
        auto runs = db->runs().list();
        QCOMPARE(runs->front().status, storage::RunStatus::Completed);
        QVERIFY(!db->runs().metrics(runs->front().id, "train_loss")->empty());
        QVERIFY(!db->runs().metrics(runs->front().id, "val_ppl")->empty());
        QTest::qWait(50);
        screenshot(QStringLiteral("finetune.png"));
        // At 1280 x 800 the form is whole: nothing cut at its side (issue 65: buttons and
        // spin arrows cut, labels scrolled off their first letters).
        m_app.window->resize(1280, 800);
        QTRY_COMPARE(m_app.window->size(), QSize(1280, 800));
        auto* start = panel->findChild<QPushButton*>(QStringLiteral("fineTuneStart"));
        QVERIFY(start);
        QScrollArea* area = nullptr;
        for (QWidget* w = start->parentWidget(); w && !area; w = w->parentWidget())
            area = qobject_cast<QScrollArea*>(w);
        QVERIFY(area);
        QTRY_VERIFY(area->widget()->width() <= area->viewport()->width());
        QVERIFY(area->widget()->width() >= area->widget()->minimumSizeHint().width());
        const QRect button(start->mapTo(area->viewport(), QPoint(0, 0)), start->size());
        QVERIFY(button.left() >= 0 && button.right() < area->viewport()->width());
        m_app.window->resize(1280, 820);
    }

    void compareOverlapsChartsStoresAndReopens() {
        QVERIFY2(!m_fineTuned.isEmpty(), "needs the fine-tuned model of the previous test");
        m_app.window->showPage(MainWindow::Page::Compare);
        ui::ComparePanel* panel = m_app.window->comparePanel();
        const QString base = QDir(m_bundled).absolutePath();
        panel->setModels(base, m_fineTuned);
        panel->setTextFile(m_book);
        panel->setGrid("32", "0, 8, 16, 40");
        // The model boxes show the models' names whole.
        for (const char* name :
             {"compareModelA", "compareModelB", "compareContModel0", "compareContModel1"}) {
            auto* box = panel->findChild<QComboBox*>(QLatin1String(name));
            QVERIFY2(box && box->count() >= 2, name);
            QTRY_VERIFY2(test::showsWhole(box), name); // once the page's layout has settled
        }
        QSignalSpy finished(panel, &ui::ComparePanel::finished);
        QVERIFY(panel->run());
        QVERIFY(finished.wait(300000));
        QCOMPARE(finished.at(0).at(0).toBool(), true);
        // The overlap axis starts at 0 (the smallest overlap), never below.
        auto* byOverlap = panel->findChild<ui::LineChart*>(QStringLiteral("chartByOverlap"));
        QCOMPARE(byOverlap->xRange().first, 0.0);
        QVERIFY(byOverlap->xRange().second >= 16);
        QVERIFY(byOverlap->yRange().first >= 0);
        // 40 >= 32 is skipped: 2 models x 3 overlaps.
        QCOMPARE(panel->rows().size(), size_t(6));
        for (const auto& r : panel->rows()) {
            QVERIFY(r.tokenPpl > 1);
            QVERIFY(r.flopsPerToken > 0);
        }
        // More overlap costs more compute per token.
        auto table = panel->findChild<QTableWidget*>("compareTable");
        QCOMPARE(table->rowCount(), 6);
        {
            auto db = openDb();
            QCOMPARE(db->evals().list()->size(), size_t(6));
        }
        QTest::qWait(50);
        screenshot(QStringLiteral("compare.png"));

        // Reopen the stored results.
        const std::string hash = panel->rows().front().textHash;
        panel->setGrid("32", "0");
        panel->reopen(QString::fromStdString(hash));
        QTRY_COMPARE(table->rowCount(), 6);

        // Cancel a run: nothing more is stored, the panel is usable again.
        panel->setGrid("16, 32", "0, 4, 8, 12");
        QVERIFY(panel->run());
        panel->cancel();
        QVERIFY(finished.wait(120000));
        QCOMPARE(finished.last().at(0).toBool(), false);
        QVERIFY(!panel->running());

        // The same prompt under two settings, side by side.
        QSignalSpy conts(panel, &ui::ComparePanel::continuationsFinished);
        panel->findChild<QPlainTextEdit*>("comparePrompt")
            ->setPlainText("Emma Woodhouse, handsome, clever, and rich,");
        QTest::mouseClick(panel->findChild<QPushButton*>("compareContRun"), Qt::LeftButton);
        QVERIFY(panel->running());
        QVERIFY(conts.wait(120000));
        auto* a = panel->findChild<QTextBrowser*>("compareContOut0");
        auto* b = panel->findChild<QTextBrowser*>("compareContOut1");
        QVERIFY(a->toPlainText().size() > 50);
        QVERIFY(b->toPlainText().size() > 50);
        QVERIFY(a->toPlainText().startsWith("Emma Woodhouse"));
        // Each pane says which setting wrote it, and which model (two are compared).
        const QString labelA = panel->findChild<QLabel*>("compareContLabel0")->text();
        const QString labelB = panel->findChild<QLabel*>("compareContLabel1")->text();
        QVERIFY2(labelA.contains("o = 0 (disjoint windows)") && labelA.endsWith("· tiny"),
                 qPrintable(labelA));
        QVERIFY2(labelB.contains("o = 64") && labelB.contains("emma-tiny"), qPrintable(labelB));
        QTest::qWait(50);
        screenshot(QStringLiteral("compare_continuations.png"));
    }

    // Settings out of range and texts that are not UTF-8 are refused with a reason,
    // and nothing starts; a limit that cuts a character in two is not an error.
    void topicsFitAndAnalyseTheStory() {
        QVERIFY2(!m_fineTuned.isEmpty(), "needs the fine-tuned model of an earlier test");
        // A longer book, so that words recur in enough documents.
        const QByteArray more =
            test::readFile(test::sharedPath("corpus/books/austen-emma.txt")).mid(20000, 150000);
        const QString longer = m_tmp.path() + "/emma-more.txt";
        QVERIFY(test::writeFile(longer, more));
        ui::FineTunePanel* fineTune = m_app.window->fineTunePanel();
        QSignalSpy books(fineTune, &ui::FineTunePanel::booksChanged);
        fineTune->importBooks({longer});
        QVERIFY(books.wait(10000));
        // The fine-tune page's shortcut opens the Topics page.
        m_app.window->showPage(MainWindow::Page::FineTune);
        auto* shortcut = m_app.window->findChild<QPushButton*>(QStringLiteral("fitTopicsOnBooks"));
        QVERIFY(shortcut);
        QTest::mouseClick(shortcut, Qt::LeftButton);
        ui::TopicsPanel* topics = m_app.window->topicsPanel();
        QVERIFY(topics->isVisible());
        QCOMPARE(topics->topicModelCount(), 0);
        // Nothing to analyse with yet: said, and no job starts.
        QTest::mouseClick(m_app.window->findChild<QPushButton*>(QStringLiteral("topicsAnalyze")),
                          Qt::LeftButton);
        QVERIFY(!topics->analyzing());
        QVERIFY(m_app.window->findChild<QLabel*>(QStringLiteral("topicsStatus"))
                    ->text()
                    .contains(QStringLiteral("Fit a topic model first")));

        // A fit cancelled at once (before the books are read, so whatever the machine's
        // speed: a fit of this book ends in a fraction of a second): nothing starts,
        // nothing is registered.
        QSignalSpy ended(topics, &ui::TopicsPanel::fitFinished);
        topics->setFitOptions(4, 5000, QStringLiteral("Emma topics"));
        QTest::mouseClick(m_app.window->findChild<QPushButton*>(QStringLiteral("fitStart")),
                          Qt::LeftButton);
        QVERIFY(topics->fitting());
        auto* cancel = m_app.window->findChild<QPushButton*>(QStringLiteral("fitCancel"));
        QVERIFY(cancel->isEnabled());
        QTest::mouseClick(cancel, Qt::LeftButton);
        QVERIFY(ended.wait(60000));
        QCOMPARE(ended.last().at(0).toBool(), false);
        QVERIFY(!topics->fitting());
        QVERIFY(m_app.window->findChild<QLabel*>(QStringLiteral("fitStatus"))
                    ->text()
                    .contains(QStringLiteral("Cancelled")));
        QCOMPARE(topics->topicModelCount(), 0);
        // A short one, to the end: saved beside the database and registered.
        QSignalSpy fitted(topics, &ui::TopicsPanel::fitted);
        topics->setFitOptions(4, 40, QStringLiteral("Emma topics"));
        topics->fit();
        QVERIFY(fitted.wait(120000));
        const QString path = fitted.at(0).at(0).toString();
        QVERIFY(path.startsWith(m_tmp.path() + "/topics/"));
        QVERIFY(QFileInfo::exists(path));
        QTRY_COMPARE(topics->topicModelCount(), 1);
        // A model is there: the hint to fit one first is gone.
        QVERIFY(!m_app.window->findChild<QLabel*>(QStringLiteral("topicsStatus"))
                     ->text()
                     .contains(QStringLiteral("Fit a topic model first")));
        {
            auto db = openDb();
            auto list = db->topics().list();
            QCOMPARE(list->size(), size_t(1));
            QCOMPARE(list->front().topics, 4);
            QVERIFY(list->front().vocabularySize > 50);
        }

        // A story written with the recurrent model, then analysed.
        QSignalSpy ready(m_app.window.get(), &MainWindow::modelReady);
        m_app.window->loadModel(m_fineTuned);
        QVERIFY(ready.wait(60000));
        m_app.window->showPage(MainWindow::Page::Write);
        QAction* newStory = m_app.window->findChild<QAction*>("actionNewStory");
        QTRY_VERIFY(newStory->isEnabled());
        const int64_t before = m_app.window->session()->story().id; // an earlier test's
        newStory->trigger();
        QTRY_VERIFY(m_app.window->session()->isOpen() &&
                    m_app.window->session()->story().id != before);
        m_app.window->findChild<QSpinBox*>("maxTokens")->setValue(60);
        // A memory read in every window: the story's windows are shorter than T - o.
        m_app.window->findChild<QPlainTextEdit*>("memoryEdit")
            ->setPlainText(QStringLiteral("Emma Woodhouse is handsome, clever and rich."));
        m_app.window->findChild<ui::StoryNotesPanel*>()->flush();
        m_app.window->editor()->setFocus();
        QTest::keyClicks(m_app.window->editor(),
                         QString::fromUtf8(more.mid(5000, 600)).simplified());
        m_app.window->findChild<QAction*>("actionGenerate")->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(!m_app.window->session()->busy(), 120000);
        // The windows the Write page's ruler shows once the story is laid out again.
        auto* ruler = m_app.window->findChild<ui::WindowRuler*>();
        QVERIFY(ruler);
        QTRY_VERIFY_WITH_TIMEOUT(ruler->windows().size() >= 3, 20000);
        const size_t rulerWindows = ruler->windows().size();
        m_app.window->showPage(MainWindow::Page::Topics);
        QSignalSpy analysed(topics, &ui::TopicsPanel::analyzed);
        QTest::mouseClick(m_app.window->findChild<QPushButton*>(QStringLiteral("topicsAnalyze")),
                          Qt::LeftButton);
        QVERIFY2(
            analysed.wait(120000),
            qPrintable(m_app.window->findChild<QLabel*>(QStringLiteral("topicsStatus"))->text()));
        QVERIFY(topics->inspection().has_value());
        const auto& view = *topics->inspection();
        QVERIFY(view.recurrent);
        QVERIFY(view.windows.size() >= 3); // windows of 32 over ~200 tokens
        // The same windows as the Write page's ruler (issue 65: 13 against 16).
        QCOMPARE(view.windows.size(), rulerWindows);
        QVERIFY(view.jsdBits >= 0 && view.jsdBits <= 1);
        auto* states = m_app.window->findChild<QTableWidget*>(QStringLiteral("stateTokens"));
        QCOMPARE(states->rowCount(), int(view.windows.size()));
        QVERIFY(states->item(1, 2)->text().contains(QLatin1Char('%')));
        auto* words = m_app.window->findChild<QTableWidget*>(QStringLiteral("topicWords"));
        QCOMPARE(words->rowCount(), 4);
        QVERIFY(!words->item(0, 2)->text().isEmpty());
        QVERIFY(m_app.window->findChild<QLabel*>(QStringLiteral("topicsStatus"))
                    ->text()
                    .contains(QStringLiteral("JSD")));
        QTest::qWait(50);
        screenshot(QStringLiteral("topics.png"));

        // The memory probe, in the tab beside the latest generation, on the stored book.
        ui::ProbePanel* probe = topics->probePanel();
        m_app.window->findChild<QTabWidget*>(QStringLiteral("topicsBelowTabs"))
            ->setCurrentWidget(probe);
        auto* source = probe->findChild<QComboBox*>(QStringLiteral("probeSource"));
        QTRY_VERIFY(source->findText(QStringLiteral("emma-more"), Qt::MatchContains) >= 0);
        source->setCurrentIndex(source->findText(QStringLiteral("emma-more"), Qt::MatchContains));
        auto* status = probe->findChild<QLabel*>(QStringLiteral("probeStatus"));
        // A long run, cancelled: said, and no result.
        probe->setEpisodes(2000);
        QTest::mouseClick(probe->findChild<QPushButton*>(QStringLiteral("probeRun")),
                          Qt::LeftButton);
        QVERIFY(probe->running());
        // Once the book is read and the engine has the job (the cancel reaches it).
        QTRY_VERIFY_WITH_TIMEOUT(status->text().startsWith(QStringLiteral("Probing")), 30000);
        QTest::mouseClick(probe->findChild<QPushButton*>(QStringLiteral("probeCancel")),
                          Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!probe->running(), 60000);
        QVERIFY2(status->text().contains(QStringLiteral("Cancelled")), qPrintable(status->text()));
        QVERIFY(!probe->result().has_value());
        // A short one, to the end: accuracy by distance for each state.
        QSignalSpy probed(probe, &ui::ProbePanel::probed);
        probe->setEpisodes(12);
        QVERIFY(probe->run());
        QVERIFY(probed.wait(120000));
        QVERIFY(probe->result().has_value());
        const auto& result = *probe->result();
        QVERIFY(result.recurrent);
        QCOMPARE(result.chance, 0.125);
        QCOMPARE(result.cells.size(), size_t(4 * 4)); // d = 0, 1, 2, 4; on, off, mean, shuffled
        for (const auto& cell : result.cells) {
            QCOMPARE(cell.episodes, 12);
            QVERIFY(cell.correct >= 0 && cell.correct <= 12);
        }
        auto* chart = probe->findChild<ui::BarChart*>(QStringLiteral("probeChart"));
        QCOMPARE(chart->categoryCount(), 4);
        QCOMPARE(chart->setCount(), 4);
        QVERIFY2(status->text().contains(QStringLiteral("12 episodes per distance")) &&
                     status->text().contains(QStringLiteral("state on: ")),
                 qPrintable(status->text()));
        QTest::qWait(50);
        screenshot(QStringLiteral("topics_probe.png"));

        // A book too short for the distances: the engine's reason in the status line, no
        // dialog, and the last result stays.
        const QString shortBook = m_tmp.path() + "/short-note.txt";
        QVERIFY(test::writeFile(shortBook, more.mid(9000, 600)));
        QSignalSpy booksAgain(fineTune, &ui::FineTunePanel::booksChanged);
        fineTune->importBooks({shortBook});
        QVERIFY(booksAgain.wait(10000));
        probe->refreshBooks();
        QTRY_VERIFY(source->findText(QStringLiteral("short-note"), Qt::MatchContains) >= 0);
        source->setCurrentIndex(source->findText(QStringLiteral("short-note"), Qt::MatchContains));
        QSignalSpy probeFailed(probe, &ui::ProbePanel::failed);
        QVERIFY(probe->run());
        QTRY_VERIFY_WITH_TIMEOUT(!probe->running(), 60000);
        QVERIFY2(status->text().startsWith(QStringLiteral("Cannot probe")) &&
                     status->text().contains(QStringLiteral("too short")),
                 qPrintable(status->text()));
        QCOMPARE(probeFailed.size(), 0);
        QCOMPARE(probe->result()->cells.front().episodes, 12);

        // The open story, when there is none with text: a reason, and nothing starts.
        m_app.window->showPage(MainWindow::Page::Write);
        newStory->trigger();
        QTRY_VERIFY(m_app.window->session()->isOpen() &&
                    m_app.window->editor()->storyText().isEmpty());
        m_app.window->showPage(MainWindow::Page::Topics);
        probe->selectStory();
        QVERIFY2(!probe->run(), qPrintable(status->text()));
        QVERIFY(status->text().contains(QStringLiteral("Open a story with some text")));
        m_app.window->showPage(MainWindow::Page::Write);
    }

    void badInputsAreRefusedWithAReason() {
        ui::ComparePanel* compare = m_app.window->comparePanel();
        auto* status = compare->findChild<QLabel*>("compareStatus");
        compare->setModels(QDir(m_bundled).absolutePath(), QString());
        compare->setTextFile(m_book);
        compare->setGrid("32", "zero");
        QVERIFY(!compare->run());
        QVERIFY(status->text().contains("numbers"));
        compare->setGrid("32", "32, 40");
        QVERIFY(!compare->run());
        QVERIFY(status->text().contains("smaller than its window"));
        const QString latin1 = m_tmp.path() + "/latin1-book.txt";
        QVERIFY(test::writeFile(latin1, QByteArray("Caf\xe9 society.\n").repeated(50)));
        compare->setTextFile(latin1);
        compare->setGrid("32", "0");
        QVERIFY(!compare->run());
        QVERIFY(status->text().contains("not UTF-8"));
        QVERIFY(!compare->running());
        // 4,000 bytes are read for 1,000 characters: the read ends inside "é".
        auto* maxChars = compare->findChild<QSpinBox*>("compareMaxChars");
        maxChars->setValue(1000);
        const QString cut = m_tmp.path() + "/cut.txt";
        QVERIFY(test::writeFile(cut, QByteArray(3999, 'a') + QByteArray("\xc3\xa9 and more")));
        compare->setTextFile(cut);
        QSignalSpy finished(compare, &ui::ComparePanel::finished);
        QVERIFY(compare->run());
        QVERIFY(finished.wait(120000));
        QCOMPARE(finished.at(0).at(0).toBool(), true);
        maxChars->setValue(60000);

        ui::FineTunePanel* tune = m_app.window->fineTunePanel();
        auto* stats = tune->findChild<QLabel*>("fineTuneStats");
        QJsonObject s = tune->settings();
        s["window"] = 32;
        s["overlap"] = 32;
        tune->setSettings(s);
        QVERIFY(!tune->start());
        QVERIFY(stats->text().contains("smaller than the window"));
        QVERIFY(!tune->running());
        s["overlap"] = 0;
        tune->setSettings(s);
    }

    void cleanupTestCase() { m_app.stop(); }
};

QTEST_MAIN(TestLabPages)
#include "tst_lab_pages.moc"
