// The Models page's Download: the dialog's choice downloaded off the GUI thread from
// the hub stand-in on loopback (HF_ENDPOINT), with progress, then imported; Cancel
// stops it and the next download resumes; the hub's refusal reaches the writer.
#include "app_harness.h"
#include "hub_stand_in.h"
#include "test_support.h"

#include "download_dialog.h"
#include "model_catalog.h"
#include "models_panel.h"

#include <baton/ui/main_window.h>

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

using namespace baton;
using test::HubStandIn;

namespace {

std::string fixtureFile(const char* name) {
    return baton::test::readFile(baton::test::fixtureDir() + "/" + name).toStdString();
}

} // namespace

class TestModelsDownload : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    test::AppHarness m_app;
    std::unique_ptr<HubStandIn> m_hub;

    ui::ModelsPanel* panel() const { return m_app.window->modelsPanel(); }
    void closeErrorDialogs() {
        for (auto* box : m_app.window->findChildren<QMessageBox*>(QStringLiteral("errorDialog")))
            box->close();
    }

private Q_SLOTS:
    void initTestCase() {
        test::initTestProcess();
        QVERIFY(m_tmp.isValid());
        m_hub = std::make_unique<HubStandIn>();
        HubStandIn::Repo repo;
        for (const char* name : {"config.json", "vocab.json", "merges.txt"})
            repo.files[name] = {fixtureFile(name), false};
        repo.files["model.safetensors"] = {fixtureFile("model.safetensors"), true};
        QVERIFY(repo.files["model.safetensors"].bytes.size() > 100000);
        m_hub->addRepo("baton-test/gpt2-tiny", repo);
        qputenv("HF_ENDPOINT", QByteArray::fromStdString(m_hub->endpoint()));
        qunsetenv("HF_TOKEN");
        m_app.start(m_tmp.filePath(QStringLiteral("baton.db")), {test::fixtureDir()});
        if (QTest::currentTestFailed())
            return;
        QTRY_VERIFY(m_app.window->catalog()->loaded());
        m_app.window->showPage(ui::MainWindow::Page::Models);
        // Never the user's own data folder (ctest sets XDG_DATA_HOME too).
        panel()->setDownloadFolder(m_tmp.filePath(QStringLiteral("models")));
    }
    void cleanupTestCase() {
        m_app.stop();
        m_hub.reset();
    }

    void cancelThenResumeThenImport() {
        // Slowly, so that Cancel comes in the middle of the weights.
        m_hub->setChunkDelay(20);
        QSignalSpy finished(panel(), &ui::ModelsPanel::importFinished);
        auto* progress = panel()->findChild<QProgressBar*>(QStringLiteral("modelDownloadProgress"));
        auto* cancel = panel()->findChild<QPushButton*>(QStringLiteral("modelCancelDownload"));
        QVERIFY(progress && cancel);
        // Through the dialog, as a writer does: the repository typed in.
        QTimer::singleShot(0, this, [] {
            auto* dialog = qobject_cast<ui::DownloadDialog*>(QApplication::activeModalWidget());
            QVERIFY(dialog);
            QDir().mkpath(QStringLiteral(BATON_SCREENSHOT_DIR));
            QVERIFY(
                dialog->grab().save(QStringLiteral(BATON_SCREENSHOT_DIR "/download_dialog.png")));
            // The official GPT-2 sizes are offered; the first is chosen.
            QCOMPARE(dialog->repository(), QStringLiteral("openai-community/gpt2"));
            dialog->findChild<QLineEdit*>(QStringLiteral("downloadRepository"))
                ->setText(QStringLiteral("baton-test/gpt2-tiny"));
            dialog->accept();
        });
        panel()->findChild<QPushButton*>(QStringLiteral("modelDownload"))->click();
        QVERIFY(panel()->downloading());
        QVERIFY(progress->isVisible() && cancel->isVisible());
        QTRY_VERIFY_WITH_TIMEOUT(progress->value() > 0, 30000);
        m_app.screenshot(QStringLiteral("models_download.png"));
        cancel->click();
        QVERIFY(finished.wait(30000));
        QCOMPARE(finished.last().at(0).toBool(), false);
        QVERIFY(!progress->isVisible());
        const QString folder = m_tmp.filePath(QStringLiteral("models/baton-test--gpt2-tiny"));
        QVERIFY(!QFile::exists(folder));
        QVERIFY(m_app.window->findChild<QLabel*>(QStringLiteral("modelStatus"))
                    ->text()
                    .contains(QStringLiteral("resumes")));

        // Again, at full speed: it resumes, then the folder is imported.
        m_hub->clearFaults();
        m_hub->clearSeen();
        const size_t modelsBefore = m_app.window->catalog()->models().size();
        panel()->download(QStringLiteral("baton-test/gpt2-tiny"));
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.last().at(0).toBool(), true);
        QTRY_COMPARE(m_app.window->catalog()->models().size(), modelsBefore + 1);
        QVERIFY(m_app.window->catalog()->byPath(folder).has_value());
        bool resumed = false;
        for (const auto& s : m_hub->seen())
            resumed = resumed || (!s.range.empty() && s.cdn);
        QVERIFY(resumed);
    }

    void theHubsRefusalIsShown() {
        QSignalSpy failed(panel(), &ui::ModelsPanel::failed);
        panel()->download(QStringLiteral("nobody/nothing"));
        QVERIFY(failed.wait(30000));
        const auto error = failed.last().at(1).value<ui::ErrorText>();
        QVERIFY2(error.message.contains(QStringLiteral("HF_TOKEN")), qPrintable(error.message));
        QTRY_VERIFY(m_app.window->findChild<QMessageBox*>(QStringLiteral("errorDialog")));
        closeErrorDialogs();
        // Not a repository id at all: said at once.
        panel()->download(QStringLiteral("not a repo"));
        QCOMPARE(failed.count(), 2);
        QVERIFY(!panel()->downloading());
        closeErrorDialogs();
    }
};

QTEST_MAIN(TestModelsDownload)
#include "tst_models_download.moc"
