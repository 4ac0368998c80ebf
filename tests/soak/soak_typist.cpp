// The app typing, for tests/soak/kill9.sh: the real main window on a story database
// (as main() builds it, offscreen), typing numbered sentences into the story's editor
// at a writer's pace. After each sentence has been autosaved (a pause in typing, then
// the storage thread's answer), its number is appended to SIDE and fsynced, so a
// kill -9 at any moment can be checked: every number in SIDE must be in the story.
// With MODEL, that model is loaded first: the Context dock then lays the story out on
// the engine thread as it is typed, through the story engine's own connection to the
// database, so the app holds two connections (as a writer's app does).
//   soak_typist DB STORY_ID SIDE [MODEL]
#include <baton/engine/model.h>
#include <baton/engine/qt/model_jobs.h>
#include <baton/storage/qt/storage_controller.h>
#include <baton/ui/main_window.h>

#include "story_editor.h"
#include "story_session.h"

#include <QApplication>
#include <QStandardPaths>
#include <QTextCursor>
#include <QTimer>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
    if (argc != 4 && argc != 5) {
        std::fprintf(stderr, "usage: soak_typist DB STORY_ID SIDE [MODEL]\n");
        return 2;
    }
    QStandardPaths::setTestModeEnabled(true); // never the user's settings
    QApplication app(argc, argv);
    baton::engine::initializeRuntime(1);
    baton::storage::StorageController storage;
    baton::engine::ModelJobs engine, lab;
    baton::ui::MainWindow window(storage, engine, lab, {});
    window.show();
    if (argc == 5)
        window.loadModel(QString::fromLocal8Bit(argv[4]));
    window.openDatabase(QString::fromLocal8Bit(argv[1]));
    const qint64 story = QString::fromLocal8Bit(argv[2]).toLongLong();
    const int side = ::open(argv[3], O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (side < 0)
        return 1;
    QObject::connect(&window, &baton::ui::MainWindow::databaseOpened, &window,
                     [&] { window.session()->open(story); });

    int next = 0;        // the next sentence's number
    int pendingFrom = 0; // sentences typed but not yet known to be saved
    quint64 flush = 0;   // the flush that answers for sentences [pendingFrom, flushUpTo)
    int flushUpTo = 0;
    QObject::connect(&storage, &baton::storage::StorageController::flushed, &window,
                     [&](quint64 r) {
                         if (r != flush || flush == 0)
                             return;
                         flush = 0;
                         for (; pendingFrom < flushUpTo; ++pendingFrom) {
                             const std::string line = std::to_string(pendingFrom) + "\n";
                             if (::write(side, line.data(), line.size()) < 0)
                                 std::abort();
                         }
                         ::fsync(side);
                     });
    QTimer typist;
    typist.setInterval(150);
    QObject::connect(&typist, &QTimer::timeout, &window, [&] {
        auto* editor = window.editor();
        if (!window.session()->isOpen() || window.session()->busy())
            return;
        // Saved: the editor holds nothing typed and the storage thread has answered.
        if (flush != 0)
            return; // waiting for the storage thread's answer
        if (editor->typedText().isEmpty() && pendingFrom < next) {
            flushUpTo = next;
            flush = storage.flush();
            return;
        }
        if (!editor->typedText().isEmpty())
            return; // waiting for the autosave (a pause in typing)
        editor->moveCursor(QTextCursor::End);
        editor->insertPlainText(QStringLiteral(" Sentence %1 was typed.").arg(next++));
    });
    QObject::connect(&window, &baton::ui::MainWindow::databaseOpened, &typist,
                     qOverload<>(&QTimer::start));
    return app.exec();
}
