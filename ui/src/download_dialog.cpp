#include "download_dialog.h"

#include <QDialogButtonBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

namespace baton::ui {

namespace {

struct Offer {
    const char* repo;
    const char* name;
    const char* size;
};

// The sizes of their model.safetensors files on the hub.
constexpr Offer kOffers[] = {
    {"openai-community/gpt2", "GPT-2", "124 M parameters, 0.5 GB"},
    {"openai-community/gpt2-medium", "GPT-2 Medium", "355 M parameters, 1.5 GB"},
    {"openai-community/gpt2-large", "GPT-2 Large", "774 M parameters, 3.2 GB"},
    {"openai-community/gpt2-xl", "GPT-2 XL", "1.6 B parameters, 6.4 GB"},
    {"distilbert/distilgpt2", "DistilGPT2", "82 M parameters, 0.35 GB"},
};

} // namespace

DownloadDialog::DownloadDialog(const QString& destination, QWidget* parent)
    : QDialog(parent) {
    setObjectName(QStringLiteral("downloadDialog"));
    setWindowTitle(tr("Download a model"));
    auto* intro = new QLabel(
        tr("Download a GPT-2 model from the Hugging Face Hub. Only its safetensors weights and "
           "tokenizer are fetched, each file is checked, and a download that stops resumes "
           "where it stopped the next time."));
    intro->setWordWrap(true);
    m_offers = new QListWidget;
    m_offers->setObjectName(QStringLiteral("downloadOffers"));
    for (const Offer& o : kOffers) {
        auto* item = new QListWidgetItem(
            tr("%1 — %2").arg(QString::fromUtf8(o.name), QString::fromUtf8(o.size)), m_offers);
        item->setData(Qt::UserRole, QString::fromUtf8(o.repo));
        item->setToolTip(QString::fromUtf8(o.repo));
    }
    m_repo = new QLineEdit;
    m_repo->setObjectName(QStringLiteral("downloadRepository"));
    m_repo->setPlaceholderText(tr("owner/name, or owner/name@revision"));
    auto* repoLabel = new QLabel(tr("&Repository:"));
    repoLabel->setBuddy(m_repo);
    auto* where = new QLabel(tr("Saved in %1. HF_TOKEN (for gated models), HF_ENDPOINT and "
                                "https_proxy are read from the environment.")
                                 .arg(destination));
    where->setWordWrap(true);
    where->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Download"));
    buttons->button(QDialogButtonBox::Ok)->setEnabled(false);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_offers, &QListWidget::currentItemChanged, this, [this](QListWidgetItem* item) {
        if (item)
            m_repo->setText(item->data(Qt::UserRole).toString());
    });
    connect(m_offers, &QListWidget::itemDoubleClicked, this, &QDialog::accept);
    connect(m_repo, &QLineEdit::textChanged, this, [buttons](const QString& text) {
        buttons->button(QDialogButtonBox::Ok)->setEnabled(!text.trimmed().isEmpty());
    });

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addWidget(m_offers);
    auto* row = new QHBoxLayout;
    row->addWidget(repoLabel);
    row->addWidget(m_repo, 1);
    layout->addLayout(row);
    layout->addWidget(where);
    layout->addWidget(buttons);
    m_offers->setCurrentRow(0);
    // As tall as its offers, no taller.
    m_offers->setFixedHeight(m_offers->sizeHintForRow(0) * m_offers->count() +
                             2 * m_offers->frameWidth() + 4);
    resize(520, sizeHint().height());
}

QString DownloadDialog::repository() const {
    return m_repo->text().trimmed();
}

void DownloadDialog::setRepository(const QString& repo) {
    m_repo->setText(repo);
}

} // namespace baton::ui
