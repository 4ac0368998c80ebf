// Checks on real widgets that the GUI suites share.
#pragma once

#include <QComboBox>
#include <QScrollArea>
#include <QStyle>
#include <QStyleOptionComboBox>
#include <QtGlobal>

namespace baton::test {

// Every item of the box fits its text field whole, and the box is not cut by the
// scroll area it sits in.
inline bool showsWhole(QComboBox* box) {
    QStyleOptionComboBox opt;
    opt.initFrom(box);
    opt.frame = true;
    const QRect field =
        box->style()->subControlRect(QStyle::CC_ComboBox, &opt, QStyle::SC_ComboBoxEditField, box);
    for (int i = 0; i < box->count(); ++i)
        if (box->fontMetrics().horizontalAdvance(box->itemText(i)) > field.width()) {
            qWarning("%s: \"%s\" is cut", qPrintable(box->objectName()),
                     qPrintable(box->itemText(i)));
            return false;
        }
    for (QWidget* w = box->parentWidget(); w; w = w->parentWidget())
        if (auto* area = qobject_cast<QScrollArea*>(w)) {
            const QRect in(box->mapTo(area->viewport(), QPoint(0, 0)), box->size());
            return area->viewport()->rect().contains(in);
        }
    return true;
}

} // namespace baton::test
