// Baton's icon, painted (the same drawing as packaging/linux/baton.svg, which the
// desktop entry uses), so the window has it without an image plugin.
#pragma once

#include <QIcon>

namespace baton::ui {
QIcon appIcon();
}
