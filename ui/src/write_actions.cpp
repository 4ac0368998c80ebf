#include "write_actions.h"

#include <QAction>
#include <QCoreApplication>
#include <QWidget>

namespace baton::ui {

namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("WritePage", text);
}

} // namespace

WriteActions WriteActions::create(QObject* owner, QWidget& window) {
    auto make = [owner, &window](const QString& text, const QString& name, const QKeySequence& key,
                                 const QString& tip = QString()) {
        auto* a = new QAction(text, owner);
        a->setObjectName(name);
        if (!key.isEmpty())
            a->setShortcut(key);
        if (!tip.isEmpty())
            a->setToolTip(tip);
        window.addAction(a);
        return a;
    };
    WriteActions a{};
    a.newStory = make(tr("&New story"), QStringLiteral("actionNewStory"), QKeySequence::New);
    a.newAdventure = make(tr("New &adventure"), QStringLiteral("actionNewAdventure"),
                          QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_N),
                          tr("A text adventure: you act and speak, the model tells what happens "
                             "(Ctrl+Shift+N)"));
    a.importStory = make(tr("&Import story…"), QStringLiteral("actionImportStory"),
                         QKeySequence(Qt::CTRL | Qt::Key_I),
                         tr("A new story from a book: UTF-8 text, Markdown or a DRM-free EPUB "
                            "(Ctrl+I)"));
    a.exportStory = make(tr("&Export story…"), QStringLiteral("actionExportStory"),
                         QKeySequence(Qt::CTRL | Qt::Key_E),
                         tr("Save the current branch of the story as Markdown or plain text "
                            "(Ctrl+E); Import story reads it back"));
    a.undo = make(tr("&Undo"), QStringLiteral("actionUndo"), QKeySequence::Undo);
    a.redo = make(tr("&Redo"), QStringLiteral("actionRedo"), QKeySequence::Redo);
    a.previousAlternative =
        make(tr("&Previous alternative"), QStringLiteral("actionPreviousAlternative"),
             QKeySequence(Qt::ALT | Qt::Key_Left));
    a.nextAlternative = make(tr("&Next alternative"), QStringLiteral("actionNextAlternative"),
                             QKeySequence(Qt::ALT | Qt::Key_Right));
    a.undoTurn = make(tr("Undo &turn"), QStringLiteral("actionUndoTurn"), QKeySequence());
    a.rename = make(tr("&Rename"), QStringLiteral("actionRenameStory"), QKeySequence(Qt::Key_F2));
    a.remove = make(tr("&Delete"), QStringLiteral("actionDeleteStory"), QKeySequence::Delete);
    a.remove->setShortcutContext(Qt::WidgetShortcut); // on the list only
    a.rename->setShortcutContext(Qt::WidgetShortcut);
    a.undoRemove = make(tr("&Undo delete"), QStringLiteral("actionUndoDelete"), QKeySequence());
    a.generate = make(tr("&Generate"), QStringLiteral("actionGenerate"),
                      QKeySequence(Qt::CTRL | Qt::Key_Return),
                      tr("Save what you typed and let the model continue (Ctrl+Enter)"));
    a.generate->setShortcuts(
        {QKeySequence(Qt::CTRL | Qt::Key_Return), QKeySequence(Qt::CTRL | Qt::Key_Enter)});
    a.continueStory = make(tr("&Continue"), QStringLiteral("actionContinue"),
                           QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Return),
                           tr("Let the model write more (Ctrl+Shift+Enter)"));
    a.retry = make(tr("&Retry"), QStringLiteral("actionRetry"), QKeySequence(Qt::CTRL | Qt::Key_R),
                   tr("Write a new alternative to the last generation (Ctrl+R); the old one is "
                      "kept"));
    a.stop = make(tr("&Stop"), QStringLiteral("actionStop"), QKeySequence(Qt::Key_Escape),
                  tr("Stop generating; what was written is kept (Esc)"));
    a.loss = make(tr("Show &windows and loss"), QStringLiteral("actionShowLoss"),
                  QKeySequence(Qt::CTRL | Qt::Key_L),
                  tr("Score the story in windows: draw the windows under the text and colour "
                     "each token by how surprised the model was (Ctrl+L)"));
    a.loss->setCheckable(true);
    a.duplicate = make(tr("D&uplicate"), QStringLiteral("actionDuplicateStory"),
                       QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D),
                       tr("Copy the story with all its branches (Ctrl+Shift+D)"));
    return a;
}

} // namespace baton::ui
