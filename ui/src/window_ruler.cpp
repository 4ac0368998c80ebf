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

WindowRuler::WindowRuler(QWidget* parent)
    : QWidget(parent) {
    setObjectName(QStringLiteral("windowRuler"));
    setMouseTracking(true);
    m_hint = tr("Window ruler: Story > Show windows and loss (Ctrl+L)");
}

QSize WindowRuler::sizeHint() const {
    return {400, fontMetrics().height() * 2 + 14};
}

void WindowRuler::setWindows(std::vector<RulerWindow> windows, int64_t tokens, bool carriesState) {
    m_windows = std::move(windows);
    m_tokens = tokens;
    m_state = carriesState;
    update();
}

void WindowRuler::clear(const QString& hint) {
    m_windows.clear();
    m_tokens = 0;
    m_hint = hint;
    update();
}

int WindowRuler::windowAt(int x) const {
    if (m_tokens <= 0)
        return -1;
    const double w = std::max(1, width() - 2 * kMargin);
    const double token = (x - kMargin) / w * double(m_tokens);
    // The latest window that covers the token (windows overlap).
    for (int i = int(m_windows.size()) - 1; i >= 0; --i)
        if (token >= double(m_windows[size_t(i)].firstToken) &&
            token <= double(m_windows[size_t(i)].lastToken) + 1)
            return i;
    return -1;
}

void WindowRuler::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Window));
    p.setPen(palette().color(QPalette::Mid));
    p.drawLine(0, 0, width(), 0);
    if (m_windows.empty() || m_tokens <= 0) {
        QColor c = palette().color(QPalette::WindowText);
        c.setAlphaF(0.55);
        p.setPen(c);
        p.drawText(rect().adjusted(kMargin, 0, -kMargin, 0), Qt::AlignVCenter | Qt::AlignLeft,
                   m_hint);
        return;
    }
    p.setRenderHint(QPainter::Antialiasing);
    const double w = std::max(1, width() - 2 * kMargin);
    auto xOf = [&](double token) { return kMargin + token / double(m_tokens) * w; };
    const int barTop = 6, barH = height() - fontMetrics().height() - 12;
    for (size_t i = 0; i < m_windows.size(); ++i) {
        const RulerWindow& win = m_windows[i];
        const QRectF r(xOf(double(win.firstToken)), barTop,
                       std::max(1.0, xOf(double(win.lastToken + 1)) - xOf(double(win.firstToken))),
                       barH);
        p.setPen(Qt::NoPen);
        p.setBrush(lossColor(win.meanLoss));
        p.drawRect(r);
        if (win.overlap > 0) { // the part re-read from the previous window
            QColor o(0x1f, 0x3d, 0x5c, 60);
            p.setBrush(QBrush(o, Qt::BDiagPattern));
            p.drawRect(QRectF(r.left(), r.top(),
                              xOf(double(win.firstToken + win.overlap)) - r.left(), r.height()));
        }
        // A window start; with a recurrent model the state enters here.
        p.setPen(QPen(QColor(0x1f, 0x3d, 0x5c), 1.5));
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
    const RulerWindow& first = m_windows.front();
    const int T = int(first.lastToken - first.firstToken + 1);
    p.drawText(QRect(kMargin, barTop + barH + 2, width() - 2 * kMargin, fontMetrics().height() + 4),
               Qt::AlignLeft | Qt::AlignVCenter,
               tr("%1 tokens · %2 windows of %3%4 · shade = mean loss per window")
                   .arg(m_tokens)
                   .arg(m_windows.size())
                   .arg(T)
                   .arg(m_state ? tr(" · ▸ state carried forward") : tr(" · no state")));
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
            QToolTip::showText(help->globalPos(),
                               tr("Window %1: tokens %2–%3, overlap %4, mean loss %5 nats")
                                   .arg(i + 1)
                                   .arg(win.firstToken)
                                   .arg(win.lastToken)
                                   .arg(win.overlap)
                                   .arg(win.meanLoss, 0, 'f', 2),
                               this);
        } else {
            QToolTip::hideText();
        }
        return true;
    }
    return QWidget::event(e);
}

} // namespace baton::ui
