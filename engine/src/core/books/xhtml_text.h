// The paragraphs of an XHTML document (an EPUB chapter): block elements end paragraphs,
// <br> breaks a line, whitespace is collapsed, and what is not text (scripts, styles,
// images, SVG, MathML, the head) is left out.
#pragma once

#include "baton/engine/error.h"

#include <string>
#include <vector>

namespace baton::engine::books {

// BookInvalid (naming `name`) when the document is not valid UTF-8 or not well-formed
// XML; the paragraphs are valid UTF-8.
Result<std::vector<std::string>> xhtmlParagraphs(const std::string& bytes, const std::string& name);

} // namespace baton::engine::books
