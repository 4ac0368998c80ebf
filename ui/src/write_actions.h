// The Write page's actions: their texts, shortcuts and tooltips. What they do is the
// page's (write_page.cpp connects them).
#pragma once

class QAction;
class QObject;
class QWidget;

namespace baton::ui {

struct WriteActions {
    QAction *newStory, *newAdventure, *importStory, *exportStory, *undo, *redo,
        *previousAlternative, *nextAlternative, *undoTurn, *rename, *duplicate, *remove,
        *undoRemove, *generate, *continueStory, *retry, *stop, *loss;

    // Creates them as children of `owner`, added to `window` (for their shortcuts).
    static WriteActions create(QObject* owner, QWidget& window);
};

} // namespace baton::ui
