// The composition root of the desktop app: the application, one StorageController
// on the story database, two model queues (the story's model; the lab's), the main
// window. Shutdown runs in reverse order of construction: the window (which stops a
// running generation and writes a pending delete), then the queues (each cancels its
// jobs and joins its thread), then the storage (writes everything queued, closes the
// database).
#include <baton/app/paths.h>
#include <baton/engine/model.h>
#include <baton/engine/qt/model_jobs.h>
#include <baton/storage/qt/storage_controller.h>
#include <baton/ui/main_window.h>

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QMessageBox>
#include <QSettings>
#include <QTimer>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("baton"));
    QApplication::setApplicationDisplayName(QStringLiteral("Baton"));
    QApplication::setOrganizationName(QStringLiteral("baton"));
    QApplication::setApplicationVersion(QStringLiteral(BATON_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Baton: a studio for long interactive stories with a language model."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption dbOption(
        QStringLiteral("db"),
        QStringLiteral("The story database (default: $XDG_DATA_HOME/baton/baton.db or "
                       "~/.local/share/baton/baton.db)."),
        QStringLiteral("PATH"));
    const QCommandLineOption modelOption(
        QStringLiteral("model"),
        QStringLiteral("A model folder to load (default: the model of the story reopened at "
                       "launch, else the model list's default: the bundled baton-mini until "
                       "another is made the default on the Models page)."),
        QStringLiteral("DIR"));
    parser.addOption(dbOption);
    parser.addOption(modelOption);
    parser.process(app);

    baton::engine::initializeRuntime();
    baton::engine::rememberModelIdentitiesIn(baton::app::modelIdentityMemoFolder());
    baton::engine::keepConvertedWeightsIn(baton::app::convertedWeightsCacheFolder());
    baton::storage::StorageController storage;
    baton::engine::ModelJobs engine; // the story's model
    baton::engine::ModelJobs lab;    // evaluations, fine-tuning, model checks
    QStringList bundled;
    for (const std::string& dir : baton::app::bundledModelDirs())
        bundled << QString::fromStdString(dir);
    baton::ui::MainWindow window(storage, engine, lab, bundled);
    QSettings settings;
    window.restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    window.restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    window.show();

    QString db = parser.value(dbOption);
    if (db.isEmpty()) {
        const std::string path = baton::app::defaultDatabasePath();
        const std::string error = path.empty() ? std::string("set HOME or XDG_DATA_HOME")
                                               : baton::app::makeParentFolders(path);
        if (!error.empty()) {
            QMessageBox::critical(&window, QStringLiteral("Baton"),
                                  QObject::tr("The story database has no place to live: %1. "
                                              "Give one with --db PATH.")
                                      .arg(QString::fromStdString(error)));
            return 1;
        }
        db = QString::fromStdString(path);
    }
    window.openDatabase(db);

    // An explicit --model, else the model list's default (the bundled baton-mini until
    // the user sets another), loaded once the database is open.
    const QString model = parser.value(modelOption);
    if (!model.isEmpty())
        window.loadModel(model);
    else if (!bundled.isEmpty())
        window.setLoadDefaultModel(true);
    else {
        window.setLoadDefaultModel(true);
        window.setNoModelHint(
            QObject::tr(
                "No model: the bundled model (%1) is not installed. Import a Hugging Face GPT-2 "
                "folder in the Models page (Ctrl+4).")
                .arg(QString::fromLatin1(baton::app::kDefaultModel)));
    }
    return app.exec();
}
