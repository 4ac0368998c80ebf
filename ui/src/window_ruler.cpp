#include "window_ruler.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace baton::ui {

namespace {
constexpr int kMargin = 10;

// Loss shade: pale green (low) through amber to red (high), over 2..8 nats.
QColor lossColor(double nll) {
    const double t = std::clamp((nll - 2.0) / 6.0, 0.0, 1.0);
    const QColor lo(0xcf, 0xe8, 0xc9), mid(0xf6, 0xd3, 0x8a), hi(0xe8, 0x8f, 0x80);
    auto mix = [](const QColor& a, const QColor& b, double f) {
        return QColor(int(a.red() + (b.red() - a.red()) * f),
                      int(a.green() + (b.green() - a.green()) * f),
                      int(a.blue() + (b.blue() - a.blue()) * f));
    };
    return t < 0.5 ? mix(lo, mid, t * 2) : mix(mid, hi, (t - 0.5) * 2);
}
} // namespace

QString windowCaption(qint64 index, int used, int size) {
    return WindowRuler::tr("Window %1 · %2 of %3 in use").arg(index + 1).arg(used).arg(size);
}

WindowRuler::WindowRuler(QWidget* parent)
    : QWidget(parent) {
    setObjectName(QStringLiteral("windowRuler"));
    setMouseTracking(true);
}

QSize WindowRuler::sizeHint() const {
    return {400, fontMetrics().height() * 2 + 14};
}

QSize WindowRuler::minimumSizeHint() const {
    return {120, fontMetrics().height() * 2 + 14};
}

void WindowRuler::setStoryWindows(const std::vector<int>& startChars, int textChars, int used,
                                  int size, bool carriesState) {
    m_windows.clear();
    m_chars = std::max(0, textChars);
    for (size_t i = 0; i < startChars.size(); ++i) {
        RulerWindow w;
        w.startChar = std::clamp(startChars[i], 0, m_chars);
        w.endChar = i + 1 < startChars.size() ? std::clamp(startChars[i + 1], w.startChar, m_chars)
                                              : m_chars;
        m_windows.push_back(w);
    }
    m_used = used;
    m_size = size;
    m_state = carriesState;
    shade();
    update();
}

void WindowRuler::setLoss(const std::vector<Loss>& losses) {
    m_losses = losses;
    shade();
    update();
}

void WindowRuler::shade() {
    for (RulerWindow& w : m_windows) {
        double sum = 0;
        int n = 0;
        for (const Loss& l : m_losses)
            if (l.begin >= w.startChar && l.begin < w.endChar && l.nll >= 0) {
                sum += l.nll;
                ++n;
            }
        w.meanLoss = n > 0 ? sum / n : -1;
    }
}

void WindowRuler::clear(const QString& hint) {
    m_windows.clear();
    m_losses.clear();
    m_chars = 0;
    m_hint = hint;
    update();
}

QString WindowRuler::caption() const {
    if (m_windows.empty())
        return QString();
    return windowCaption(qint64(m_windows.size()) - 1, m_used, m_size);
}

int WindowRuler::windowAt(int x) const {
    if (m_windows.empty() || m_chars <= 0)
        return -1;
    const double w = std::max(1, width() - 2 * kMargin);
    const double at = (x - kMargin) / w * double(m_chars);
    for (int i = int(m_windows.size()) - 1; i >= 0; --i)
        if (at >= double(m_windows[size_t(i)].startChar))
            return i;
    return -1;
}

void WindowRuler::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Window));
    p.setPen(palette().color(QPalette::Mid));
    p.drawLine(0, 0, width(), 0);
    if (m_windows.empty()) {
        QColor c = palette().color(QPalette::WindowText);
        c.setAlphaF(0.55);
        p.setPen(c);
        p.drawText(rect().adjusted(kMargin, 0, -kMargin, 0), Qt::AlignVCenter | Qt::AlignLeft,
                   m_hint);
        return;
    }
    p.setRenderHint(QPainter::Antialiasing);
    const double w = std::max(1, width() - 2 * kMargin);
    auto xOf = [&](double c) { return kMargin + (m_chars > 0 ? c / double(m_chars) * w : 0.0); };
    const int barTop = 6, barH = height() - fontMetrics().height() - 12;
    const QColor ink(0x1f, 0x3d, 0x5c);
    for (size_t i = 0; i < m_windows.size(); ++i) {
        const RulerWindow& win = m_windows[i];
        const bool open = i + 1 == m_windows.size();
        const QRectF r(xOf(win.startChar), barTop,
                       std::max(open ? 3.0 : 1.0, xOf(win.endChar) - xOf(win.startChar)), barH);
        p.setPen(Qt::NoPen);
        p.setBrush(win.meanLoss >= 0
                       ? lossColor(win.meanLoss)
                       : (open ? QColor(0xd8, 0xe4, 0xf0) : QColor(0xe6, 0xe3, 0xdc)));
        p.drawRect(r);
        if (open) { // the open window: outlined
            p.setPen(QPen(ink, 1.5));
            p.setBrush(Qt::NoBrush);
            p.drawRect(r.adjusted(0.75, 0.75, -0.75, -0.75));
        }
        // A window start; with a recurrent model the state enters here.
        p.setPen(QPen(ink, 1.5));
        p.drawLine(QPointF(r.left(), barTop - 3), QPointF(r.left(), barTop + barH + 3));
        if (m_state && i > 0) {
            QPolygonF arrow;
            arrow << QPointF(r.left() - 5, barTop + barH / 2.0 - 4)
                  << QPointF(r.left() + 1, barTop + barH / 2.0)
                  << QPointF(r.left() - 5, barTop + barH / 2.0 + 4);
            p.setBrush(QColor(0xd0, 0x6a, 0x1f));
            p.setPen(Qt::NoPen);
            p.drawPolygon(arrow);
        }
    }
    QColor text = palette().color(QPalette::WindowText);
    text.setAlphaF(0.7);
    p.setPen(text);
    QString line = caption();
    if (m_windows.size() > 1)
        line += m_state ? tr(" · ▸ state carried into each window") : tr(" · no state");
    line += hasLoss() ? tr(" · shade = mean loss") : tr(" · Ctrl+L: loss");
    p.drawText(QRect(kMargin, barTop + barH + 2, width() - 2 * kMargin, fontMetrics().height() + 4),
               Qt::AlignLeft | Qt::AlignVCenter,
               fontMetrics().elidedText(line, Qt::ElideRight, width() - 2 * kMargin));
}

void WindowRuler::mousePressEvent(QMouseEvent* event) {
    const int i = windowAt(int(event->position().x()));
    if (i >= 0)
        Q_EMIT windowClicked(m_windows[size_t(i)].startChar);
}

bool WindowRuler::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(e);
        const int i = windowAt(help->pos().x());
        if (i >= 0) {
            const RulerWindow& win = m_windows[size_t(i)];
            QString tip = i + 1 == int(m_windows.size())
                              ? tr("Window %1, open: %2 of %3 positions in use")
                                    .arg(i + 1)
                                    .arg(m_used)
                                    .arg(m_size)
                              : tr("Window %1").arg(i + 1);
            if (win.meanLoss >= 0)
                tip += tr(", mean loss %1 nats").arg(win.meanLoss, 0, 'f', 2);
            QToolTip::showText(help->globalPos(), tip, this);
        } else {
            QToolTip::hideText();
        }
        return true;
    }
    return QWidget::event(e);
}

} // namespace baton::ui
