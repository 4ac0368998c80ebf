// "Add recurrence…" through the app's real widgets, offscreen, with the fixture model:
// the Models page offers it for a baseline model only and opens the Fine-tune page set
// for a recurrence adapter; the run (cancelled at its first step, resumed with its own
// settings) trains the module alone and registers the adapter on its base, measured on the held-out
// text with the base; the Models page lists it under its base; writing with it loads the base with
// the adapter and ties a new story to it; forgotten, it is imported again onto the base its
// adapter.json names, and refused on another. Screenshots of both pages go to the build tree.
#include "app_harness.h"
#include "test_support.h"
#include "tiny_model.h"

#include "finetune_panel.h"
#include "finetune_presenter.h"
#include "model_catalog.h"
#include "models_panel.h"
#include "story_session.h"

#include <baton/engine/qt/model_jobs.h>
#include <baton/ui/main_window.h>

#include <QAction>
#include <QDir>
#include <QJsonObject>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>
#include <QtTest>

using namespace baton;
using ui::MainWindow;

class TestAddRecurrence : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    test::AppHarness m_app;
    QString m_base;      // an imported baseline model (the fixture)
    QString m_recurrent; // an imported recurrent model

    void screenshot(const QString& name) { m_app.screenshot(name); }

    void closeErrorDialogs() {
        for (auto* box : m_app.window->findChildren<QMessageBox*>(QStringLiteral("errorDialog")))
            box->close();
        QCoreApplication::processEvents();
    }

    QJsonObject recurrencePresetOf(const QString& folder) {
        return ui::recurrencePreset(*m_app.window->catalog()->byPath(folder));
    }

    void import(const QString& folder) {
        QSignalSpy finished(m_app.window->modelsPanel(), &ui::ModelsPanel::importFinished);
        m_app.window->modelsPanel()->importFolder(folder);
        QVERIFY(finished.wait(60000));
        QVERIFY(finished.at(0).at(0).toBool());
        QTRY_VERIFY(m_app.window->catalog()->byPath(folder).has_value());
    }

private Q_SLOTS:
    void initTestCase() {
        test::initTestProcess();
        QVERIFY(m_tmp.isValid());
        QVERIFY2(QFileInfo::exists(test::fixtureDir() + "/config.json"),
                 qPrintable(test::missingMessage(test::fixtureDir())));
        const QString bundled = m_tmp.path() + "/bundled/tiny";
        QVERIFY(test::copyFolder(test::fixtureDir(), bundled));
        m_base = QDir(m_tmp.path() + "/imported-gpt2").absolutePath();
        QVERIFY(test::copyFolder(test::fixtureDir(), m_base));
        m_recurrent = QDir(m_tmp.path() + "/recurrent").absolutePath();
        engine::RecurrenceConfig rec;
        rec.window = 32;
        QVERIFY(test::writeRecurrentFixture(m_recurrent, rec));
        const QByteArray emma =
            test::readFile(test::sharedPath("corpus/books/austen-emma.txt")).mid(2000, 12000);
        QVERIFY2(!emma.isEmpty(), qPrintable(test::missingMessage("corpus/books")));
        const QString book = m_tmp.path() + "/emma-start.txt";
        QVERIFY(test::writeFile(book, emma));

        m_app.start(m_tmp.path() + "/lab.db", QStringList{bundled});
        if (QTest::currentTestFailed())
            return;
        QTRY_VERIFY(m_app.window->catalog()->loaded());
        import(m_base);
        import(m_recurrent);
        ui::FineTunePanel* panel = m_app.window->fineTunePanel();
        panel->importBooks({book});
        QTRY_COMPARE(panel->bookCount(), 1);
    }

    void addRecurrenceTrainsAnAdapterAndWritesWithIt() {
        ui::ModelCatalog* catalog = m_app.window->catalog();
        ui::ModelsPanel* models = m_app.window->modelsPanel();
        ui::FineTunePanel* panel = m_app.window->fineTunePanel();
        const QString base = m_base;
        QVERIFY(catalog->byPath(base).has_value());
        m_app.window->showPage(MainWindow::Page::Models);
        auto* add = models->findChild<QPushButton*>(QStringLiteral("modelAddRecurrence"));
        QVERIFY(add);
        // Offered for a baseline model, not for one that has recurrence already.
        models->selectPath(m_recurrent);
        QVERIFY(!add->isEnabled());
        models->selectPath(base);
        QVERIFY(add->isEnabled());
        add->click();
        QCOMPARE(m_app.window->findChild<QTabWidget*>(QStringLiteral("pages"))->currentIndex(),
                 int(MainWindow::Page::FineTune));
        QJsonObject s = panel->settings();
        QCOMPARE(s["base"].toString(), base);
        QCOMPARE(s["mode"].toString(), QStringLiteral("recurrent"));
        QCOMPARE(s["scope"].toString(), QStringLiteral("adapter"));
        QCOMPARE(s["window"].toInt(), 128); // the fixture's 128 positions
        QCOMPARE(s["bptt_windows"].toInt(), 20);
        QCOMPARE(s["name"].toString(), QStringLiteral("imported-gpt2-recurrence"));
        QTest::qWait(50);
        screenshot(QStringLiteral("finetune-add-recurrence.png"));
        // Smaller for the test.
        s["window"] = 32;
        s["bptt_windows"] = 2;
        s["lr"] = 3e-3;
        // Three epochs (about 60 steps): Cancel at the first step finds the run going.
        s["epochs"] = 3.0;
        panel->setSettings(s);
        QSignalSpy done(panel, &ui::FineTunePanel::runFinished);
        QVERIFY(panel->start());
        // Cancelled at its first step, then resumed from the checkpoint to the end.
        QTRY_VERIFY_WITH_TIMEOUT(panel->lossPoints() >= 1, 120000);
        panel->cancel();
        QVERIFY(done.wait(120000));
        QCOMPARE(done.last().at(0).toBool(), false);
        QTRY_VERIFY(panel->canResume());
        panel->setSettings(recurrencePresetOf(base)); // Resume restores the run's own
        QVERIFY(panel->resume());
        QCOMPARE(panel->settings()["scope"].toString(), QStringLiteral("adapter"));
        QCOMPARE(panel->settings()["window"].toInt(), 32);
        QVERIFY(done.wait(300000));
        QCOMPARE(done.last().at(0).toBool(), true);
        // The adapter alone, registered on its base, measured on the held-out text.
        const QString adapter = panel->finishedModel();
        QVERIFY2(adapter.endsWith(QStringLiteral("/adapter")), qPrintable(adapter));
        QVERIFY(QFileInfo::exists(adapter + "/adapter.json"));
        QVERIFY(!QFileInfo::exists(adapter + "/model.safetensors"));
        QTRY_VERIFY(catalog->byPath(adapter).has_value());
        QCOMPARE(catalog->byPath(adapter)->adapterBase, base);
        QVERIFY(catalog->byPath(adapter)->present);
        QCOMPARE(catalog->byPath(adapter)->window, 32);
        QVERIFY(panel->presenter().heldOutAfter().valid());
        QCOMPARE(catalog->source(adapter).folder, base);
        QCOMPARE(catalog->source(adapter).adapter, adapter);

        // The Models page lists it under its base.
        m_app.window->showPage(MainWindow::Page::Models);
        auto* list = models->findChild<QTreeWidget*>(QStringLiteral("modelList"));
        QTreeWidgetItem* adapterItem = nullptr;
        for (QTreeWidgetItemIterator it(list); *it; ++it)
            if ((*it)->data(0, Qt::UserRole + 1).toString() == adapter)
                adapterItem = *it;
        QVERIFY(adapterItem && adapterItem->parent());
        QCOMPARE(adapterItem->parent()->data(0, Qt::UserRole + 1).toString(), base);
        QCOMPARE(adapterItem->text(1), QStringLiteral("recurrence adapter"));
        models->selectPath(adapter);
        QVERIFY(!add->isEnabled());

        // Writing with it loads the base with the adapter; a new story is tied to it.
        QSignalSpy ready(m_app.window.get(), &MainWindow::modelReady);
        Q_EMIT models->useRequested(adapter);
        QVERIFY(ready.wait(60000));
        QCOMPARE(QString::fromStdString(m_app.engine->model()->path), base);
        QCOMPARE(QString::fromStdString(m_app.engine->model()->adapter), adapter);
        QVERIFY(m_app.engine->model()->recurrence.has_value());
        QVERIFY(m_app.window->findChild<QLabel*>(QStringLiteral("modelLabel"))
                    ->text()
                    .contains(QStringLiteral("+ recurrence")));
        m_app.window->showPage(MainWindow::Page::Write);
        QAction* newStory = m_app.window->findChild<QAction*>("actionNewStory");
        QTRY_VERIFY(newStory->isEnabled());
        newStory->trigger();
        QTRY_VERIFY(m_app.window->session()->isOpen());
        QCOMPARE(QString::fromStdString(m_app.window->session()->story().modelPath), adapter);
        m_app.window->showPage(MainWindow::Page::Models);
        QTest::qWait(50);
        screenshot(QStringLiteral("models-adapter.png"));

        // Forgotten, then imported again: its adapter.json names the base by identity.
        catalog->remove(catalog->byPath(adapter)->id);
        QTRY_VERIFY(!catalog->byPath(adapter).has_value());
        QSignalSpy imported(models, &ui::ModelsPanel::importFinished);
        QSignalSpy failed(models, &ui::ModelsPanel::failed);
        // On another base it is refused by the loader.
        models->importAdapter(adapter, m_recurrent);
        QVERIFY(imported.wait(60000));
        QCOMPARE(imported.last().at(0).toBool(), false);
        QCOMPARE(failed.count(), 1);
        closeErrorDialogs();
        QVERIFY(!catalog->byPath(adapter).has_value());
        models->importFolder(adapter);
        QVERIFY(imported.wait(60000));
        QCOMPARE(imported.last().at(0).toBool(), true);
        QTRY_VERIFY(catalog->byPath(adapter).has_value());
        QCOMPARE(catalog->byPath(adapter)->adapterBase, base);
    }

    void cleanupTestCase() { m_app.stop(); }
};

QTEST_MAIN(TestAddRecurrence)
#include "tst_add_recurrence.moc"
