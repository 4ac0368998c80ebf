#include "app_icon.h"

#include <QPainter>
#include <QPainterPath>
#include <QPixmap>

namespace baton::ui {

namespace {

QPixmap paintIcon(int size) {
    QPixmap pm(size, size);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    p.scale(size / 256.0, size / 256.0); // drawn on the SVG's 256 x 256 grid
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(0x1f, 0x3d, 0x5c));
    p.drawRoundedRect(QRectF(16, 16, 224, 224), 44, 44);
    p.setBrush(QColor(0xf6, 0xf1, 0xe6));
    p.drawRoundedRect(QRectF(52, 44, 152, 168), 10, 10);
    QPen lines(QColor(0xb9, 0xad, 0x95), 8, Qt::SolidLine, Qt::RoundCap);
    p.setPen(lines);
    const int ends[5] = {184, 164, 184, 150, 176};
    for (int i = 0; i < 5; ++i)
        p.drawLine(QLineF(72, 78 + 24 * i, ends[i], 78 + 24 * i));
    QPen marks(QColor(0xd0, 0x6a, 0x1f), 5);
    marks.setDashPattern({2.0, 1.6});
    p.setPen(marks);
    p.drawLine(QLineF(112, 56, 112, 200));
    p.drawLine(QLineF(160, 56, 160, 200));
    p.setPen(QPen(QColor(0x10, 0x20, 0x2f), 11, Qt::SolidLine, Qt::RoundCap));
    p.drawLine(QLineF(62, 206, 214, 54));
    p.setPen(QPen(Qt::white, 5, Qt::SolidLine, Qt::RoundCap));
    p.drawLine(QLineF(62, 206, 214, 54));
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(0x10, 0x20, 0x2f));
    p.drawEllipse(QPointF(70, 198), 16, 16);
    p.setBrush(QColor(0xd0, 0x6a, 0x1f));
    p.drawEllipse(QPointF(70, 198), 10, 10);
    return pm;
}

} // namespace

QIcon appIcon() {
    QIcon icon;
    for (int size : {16, 24, 32, 48, 64, 128, 256})
        icon.addPixmap(paintIcon(size));
    return icon;
}

} // namespace baton::ui
