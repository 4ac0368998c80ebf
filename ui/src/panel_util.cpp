#include "panel_util.h"

#include <QLabel>
#include <QLocale>
#include <QStringDecoder>

namespace baton::ui {

QLabel* sectionTitle(const QString& text) {
    auto* l = new QLabel(text);
    QFont f = l->font();
    f.setWeight(QFont::DemiBold);
    l->setFont(f);
    return l;
}

QLabel* figuresLabel(const QString& objectName, int lines) {
    auto* l = new QLabel;
    l->setObjectName(objectName);
    l->setWordWrap(true);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    l->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    l->setMinimumHeight(l->fontMetrics().lineSpacing() * lines + 4);
    return l;
}

QString countText(qint64 n, const QString& one, const QString& many) {
    return n == 1 ? one : many.arg(QLocale().toString(n));
}

QString shownModelName(const QString& name) {
    constexpr int kMax = 40;
    if (name.size() <= kMax)
        return name;
    return name.left(kMax / 2 - 1) + QChar(0x2026) + name.right(kMax / 2 - 1);
}

std::optional<QString> decodeUtf8(QByteArray bytes, bool cutAtEnd) {
    if (cutAtEnd) {
        // Back up over continuation bytes to the last lead byte; drop the character
        // it starts when its bytes are not all there.
        qsizetype lead = bytes.size() - 1;
        while (lead >= 0 && lead >= bytes.size() - 4 && (uchar(bytes[lead]) & 0xC0) == 0x80)
            --lead;
        if (lead >= 0 && uchar(bytes[lead]) >= 0xC0) {
            const uchar b = uchar(bytes[lead]);
            const qsizetype need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
            if (bytes.size() - lead < need)
                bytes.truncate(lead);
        }
    }
    QStringDecoder decode(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    QString text = decode(bytes);
    if (decode.hasError())
        return std::nullopt;
    return text;
}

std::vector<int> charIndexOfBytes(const QString& text) {
    std::vector<int> charAt;
    charAt.reserve(size_t(text.size()) * 2 + 1);
    for (int i = 0; i < text.size(); ++i) {
        const char32_t c = text.at(i).unicode();
        if (text.at(i).isHighSurrogate() && i + 1 < text.size()) {
            charAt.insert(charAt.end(), 4, i);
            ++i;
            continue;
        }
        charAt.insert(charAt.end(), size_t(c < 0x80 ? 1 : c < 0x800 ? 2 : 3), i);
    }
    charAt.push_back(int(text.size()));
    return charAt;
}

} // namespace baton::ui
