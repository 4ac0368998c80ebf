// Small pieces the panels share: a section title, strict UTF-8 decoding of files,
// counts with the right plural, model names short enough for a model box, and where the
// bytes of a text's UTF-8 fall among its characters.
#pragma once

#include <QByteArray>
#include <QString>

#include <optional>
#include <vector>

class QLabel;

namespace baton::ui {

// A label in the panel's font, semi-bold: the title of a group of fields.
QLabel* sectionTitle(const QString& text);

// A chart's status line under it: selectable, wrapped within the pane instead of
// widening it, with room for `lines` lines (a wrapped label's height is not passed up
// through the page's splitters and tabs).
QLabel* figuresLabel(const QString& objectName, int lines = 4);

// The text of UTF-8 bytes, or nothing when they are not valid UTF-8. With
// cutAtEnd (the bytes are the start of a longer file), an incomplete character at
// the very end is dropped instead of refused.
std::optional<QString> decodeUtf8(QByteArray bytes, bool cutAtEnd = false);

// `one` for a count of 1, else `many` with %1 replaced by the count (in the current
// locale's digits): countText(n, tr("1 book"), tr("%1 books")).
QString countText(qint64 n, const QString& one, const QString& many);

// A model's name as a model box shows it: whole up to 40 characters, else elided in
// the middle (the boxes' tooltips carry it whole, with the model's shape).
QString shownModelName(const QString& name);

// For the UTF-8 encoding of `text`: entry b is the character (QChar index) that byte b
// belongs to; one more entry, text.size(), for the end.
std::vector<int> charIndexOfBytes(const QString& text);

} // namespace baton::ui
