// The app as main() builds it, for the GUI suites: the storage thread, the two model
// queues (story and lab) and the main window, on a test database; a read-only second
// connection to check what was saved; screenshots into the build tree.
#pragma once

#include <baton/engine/qt/model_jobs.h>
#include <baton/storage/database.h>
#include <baton/storage/qt/storage_controller.h>
#include <baton/ui/main_window.h>

#include <QDir>
#include <QSignalSpy>
#include <QStringList>
#include <QtTest>

#include <memory>

namespace baton::test {

struct AppHarness {
    std::unique_ptr<storage::StorageController> storage;
    std::unique_ptr<engine::ModelJobs> engine;
    std::unique_ptr<engine::ModelJobs> lab;
    std::unique_ptr<ui::MainWindow> window;

    // Builds and shows the window (1280 x 820, active) with these bundled model folders
    // and opens the database at dbPath. Check QTest::currentTestFailed() after it.
    void start(const QString& dbPath, const QStringList& bundled = {}) {
        storage = std::make_unique<storage::StorageController>();
        engine = std::make_unique<engine::ModelJobs>();
        lab = std::make_unique<engine::ModelJobs>();
        window = std::make_unique<ui::MainWindow>(*storage, *engine, *lab, bundled);
        window->resize(1280, 820);
        window->show();
        QVERIFY(QTest::qWaitForWindowExposed(window.get()));
        window->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(window.get()));
        QSignalSpy opened(window.get(), &ui::MainWindow::databaseOpened);
        window->openDatabase(dbPath);
        QVERIFY(opened.wait(10000));
    }

    // Closes the window and stops the threads, the window first (as main() does).
    void stop() {
        if (window)
            window->close();
        window.reset();
        lab.reset();
        engine.reset();
        storage.reset();
    }

    // Waits until every write queued so far has been answered.
    bool flush() {
        QSignalSpy flushed(storage.get(), &storage::StorageController::flushed);
        storage->flush();
        return flushed.wait(10000);
    }

    // The window as a PNG under the build tree's screenshots/.
    void screenshot(const QString& name) {
        QDir().mkpath(QStringLiteral(BATON_SCREENSHOT_DIR));
        const QString path = QStringLiteral(BATON_SCREENSHOT_DIR "/") + name;
        QVERIFY2(window->grab().save(path), qPrintable(path));
    }

    // A second, read-only connection on the file (the app's is on its own thread);
    // null when it does not open.
    static std::unique_ptr<storage::Database> openReadOnly(const QString& path) {
        storage::OpenOptions o;
        o.readOnly = true;
        auto db = storage::Database::open(path.toStdString(), o);
        if (!db)
            return nullptr;
        return std::move(*db);
    }
};

} // namespace baton::test
