#include "models_panel.h"

#include "download_dialog.h"
#include "model_catalog.h"
#include "model_download.h"

#include <baton/app/paths.h>

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHash>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>
#include <QVBoxLayout>

namespace baton::ui {

namespace {
enum Column { NameColumn, KindColumn, ShapeColumn, WindowColumn, SizeColumn, ColumnCount };
constexpr int kPathRole = Qt::UserRole + 1;
} // namespace

ModelsPanel::ModelsPanel(ModelCatalog& catalog, engine::ModelJobs& lab, QWidget* parent)
    : QWidget(parent)
    , m_catalog(catalog)
    , m_lab(lab) {
    setObjectName(QStringLiteral("modelsPanel"));
    auto* heading = new QLabel(tr("Models"));
    QFont hf = heading->font();
    hf.setWeight(QFont::DemiBold);
    hf.setPointSizeF(hf.pointSizeF() * 1.3);
    heading->setFont(hf);
    auto* intro = new QLabel(
        tr("The bundled models are always here. Download a GPT-2 model from the Hugging Face "
           "Hub, or import a Hugging Face GPT-2 folder (config.json, model.safetensors and the "
           "tokenizer files); either is checked by loading it before it is added. Fine-tuned "
           "models add themselves. Add recurrence gives a baseline model a state carried from "
           "window to window, as a small adapter trained on your books."));
    intro->setWordWrap(true);

    m_list = new QTreeWidget;
    m_list->setObjectName(QStringLiteral("modelList"));
    m_list->setColumnCount(ColumnCount);
    m_list->setHeaderLabels({tr("Name"), tr("Kind"), tr("Shape"), tr("Windows"), tr("Size")});
    m_list->setRootIsDecorated(false);
    m_list->setAlternatingRowColors(true);
    m_list->setUniformRowHeights(true);
    m_list->header()->setSectionResizeMode(NameColumn, QHeaderView::Stretch);
    for (int c = KindColumn; c < ColumnCount; ++c)
        m_list->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    connect(m_list, &QTreeWidget::currentItemChanged, this, &ModelsPanel::updateButtons);
    connect(m_list, &QTreeWidget::itemDoubleClicked, this, [this](QTreeWidgetItem* item) {
        Q_EMIT useRequested(item->data(NameColumn, kPathRole).toString());
    });

    m_downloadFolder = QString::fromStdString(app::defaultModelsFolder());
    m_downloader = new ModelDownload(this);
    m_download = new QPushButton(tr("Download…"));
    m_download->setObjectName(QStringLiteral("modelDownload"));
    m_download->setToolTip(tr("Download a GPT-2 model from the Hugging Face Hub"));
    m_cancelDownload = new QPushButton(tr("Cancel download"));
    m_cancelDownload->setObjectName(QStringLiteral("modelCancelDownload"));
    m_cancelDownload->hide();
    m_progress = new QProgressBar;
    m_progress->setObjectName(QStringLiteral("modelDownloadProgress"));
    m_progress->hide();
    connect(m_download, &QPushButton::clicked, this, [this] {
        DownloadDialog dialog(m_downloadFolder, this);
        if (dialog.exec() == QDialog::Accepted)
            download(dialog.repository());
    });
    connect(m_cancelDownload, &QPushButton::clicked, this, &ModelsPanel::cancelDownload);
    connect(m_downloader, &ModelDownload::progress, this, &ModelsPanel::onDownloadProgress);
    connect(m_downloader, &ModelDownload::finished, this,
            [this](const QString& folder, bool alreadyThere) {
                m_progress->hide();
                m_cancelDownload->hide();
                if (alreadyThere && m_catalog.byPath(QDir(folder).absolutePath())) {
                    m_status->setText(tr("%1 is downloaded already.").arg(folder));
                    updateButtons();
                    Q_EMIT importFinished(true);
                    return;
                }
                importFolder(folder);
            });
    connect(
        m_downloader, &ModelDownload::failed, this, [this](const QString& message, bool cancelled) {
            m_progress->hide();
            m_cancelDownload->hide();
            updateButtons();
            if (cancelled) {
                m_status->setText(tr("Download stopped. Downloading the same model again resumes "
                                     "where it stopped."));
            } else {
                m_status->setText(tr("The download failed."));
                Q_EMIT failed(tr("The model could not be downloaded"), {message, {}});
            }
            Q_EMIT importFinished(false);
        });

    m_import = new QPushButton(tr("Import folder…"));
    m_import->setObjectName(QStringLiteral("modelImport"));
    m_use = new QPushButton(tr("Use for writing"));
    m_use->setObjectName(QStringLiteral("modelUse"));
    m_default = new QPushButton(tr("Set as default"));
    m_default->setObjectName(QStringLiteral("modelSetDefault"));
    m_addRecurrence = new QPushButton(tr("Add recurrence…"));
    m_addRecurrence->setObjectName(QStringLiteral("modelAddRecurrence"));
    m_addRecurrence->setToolTip(
        tr("Train a recurrence adapter for this baseline model on your books (Fine-tune "
           "page): a small folder that gives the model a state carried from window to window, "
           "while the model itself stays as it is"));
    connect(m_addRecurrence, &QPushButton::clicked, this, [this] {
        if (!selectedPath().isEmpty())
            Q_EMIT addRecurrenceRequested(selectedPath());
    });
    m_remove = new QPushButton(tr("Remove from list"));
    m_remove->setObjectName(QStringLiteral("modelRemove"));
    m_remove->setToolTip(tr("Forget an imported or fine-tuned model; its folder is kept"));
    connect(m_import, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(
            this, tr("Import a Hugging Face GPT-2 model folder"), QDir::homePath());
        if (!dir.isEmpty())
            importFolder(dir);
    });
    connect(m_use, &QPushButton::clicked, this, [this] {
        if (!selectedPath().isEmpty())
            Q_EMIT useRequested(selectedPath());
    });
    connect(m_default, &QPushButton::clicked, this, [this] {
        if (auto m = m_catalog.byPath(selectedPath()))
            m_catalog.setDefault(m->id);
    });
    connect(m_remove, &QPushButton::clicked, this, [this] {
        if (auto m = m_catalog.byPath(selectedPath()))
            m_catalog.remove(m->id);
    });
    m_weights = new QComboBox;
    m_weights->setObjectName(QStringLiteral("modelWeights"));
    m_weights->addItem(tr("32-bit (exact)"), int(engine::WeightFormat::F32));
    m_weights->addItem(tr("16-bit, bfloat16"), int(engine::WeightFormat::BF16));
    m_weights->addItem(tr("16-bit, float16"), int(engine::WeightFormat::F16));
    m_weights->addItem(tr("8-bit"), int(engine::WeightFormat::Int8));
    m_weights->addItem(tr("4-bit"), int(engine::WeightFormat::Q4));
    m_weights->setToolTip(
        tr("How the model for writing holds its weights in memory. 16-bit halves the memory and "
           "decodes about 1.5 times faster; 8-bit quarters it and is faster still, at a small "
           "cost in quality; 4-bit takes a seventh of the memory and is the fastest, at a "
           "larger cost (on the CPU; on a GPU 8-bit and 4-bit are not available). Changing it "
           "reloads the model. The first load in 8-bit or 4-bit converts the weights and keeps "
           "the result on disk (in the cache folder, 8 GiB at most), so later loads are quick."));
    connect(m_weights, &QComboBox::activated, this, [this] { Q_EMIT weightsChanged(weights()); });
    auto* weightsLabel = new QLabel(tr("Weights in memory:"));
    weightsLabel->setBuddy(m_weights);

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_download);
    buttons->addWidget(m_import);
    buttons->addSpacing(12);
    buttons->addWidget(weightsLabel);
    buttons->addWidget(m_weights);
    buttons->addStretch(1);
    buttons->addWidget(m_addRecurrence);
    buttons->addWidget(m_remove);
    buttons->addWidget(m_default);
    buttons->addWidget(m_use);

    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("modelStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(18, 14, 18, 14);
    layout->setSpacing(10);
    layout->addWidget(heading);
    layout->addWidget(intro);
    layout->addWidget(m_list, 1);
    layout->addWidget(m_status);
    auto* progressRow = new QHBoxLayout;
    progressRow->addWidget(m_progress, 1);
    progressRow->addWidget(m_cancelDownload);
    layout->addLayout(progressRow);
    layout->addLayout(buttons);

    connect(&m_catalog, &ModelCatalog::changed, this, &ModelsPanel::rebuild);
    rebuild();
}

void ModelsPanel::importFolder(const QString& folder) {
    if (m_importJob)
        return;
    const QString path = QDir(folder).absolutePath();
    if (!QFileInfo::exists(QDir(path).filePath(QStringLiteral("adapter.json")))) {
        check({path, {}}, path);
        return;
    }
    // A recurrence adapter: find its base.
    auto named = engine::readAdapterBase(path.toStdString());
    if (!named) {
        Q_EMIT failed(tr("This folder is not a model Baton can use"),
                      describeEngineError(named.error()));
        Q_EMIT importFinished(false);
        return;
    }
    const QString identity = QString::fromStdString(named->identity);
    const QString name = QString::fromStdString(named->name);
    QStringList choices;
    QStringList folders;
    int guess = 0;
    for (const CatalogModel& m : m_catalog.models()) {
        if (!m.present || m.recurrent || m.isAdapter())
            continue;
        if (m.identity == identity) { // the very base: nothing to ask
            importAdapter(path, m.path);
            return;
        }
        if (QFileInfo(m.path).fileName() == name)
            guess = int(folders.size());
        choices << QStringLiteral("%1 — %2").arg(m.name, m.summary());
        folders << m.path;
    }
    if (folders.isEmpty()) {
        Q_EMIT failed(tr("The adapter could not be imported"),
                      {tr("%1 is a recurrence adapter for %2, and no baseline model in the list "
                          "can take it. Download or import its base model first.")
                           .arg(path, name.isEmpty() ? tr("another model") : name),
                       {}});
        Q_EMIT importFinished(false);
        return;
    }
    bool ok = false;
    const QString picked = QInputDialog::getItem(
        this, tr("Choose the adapter's base model"),
        tr("%1 adds recurrence to %2. Which model in the list is that? (Loading checks that it "
           "is the very one.)")
            .arg(QFileInfo(path).fileName(), name.isEmpty() ? tr("a baseline model") : name),
        choices, guess, false, &ok);
    if (!ok) {
        Q_EMIT importFinished(false);
        return;
    }
    importAdapter(path, folders.at(int(choices.indexOf(picked))));
}

void ModelsPanel::importAdapter(const QString& folder, const QString& base) {
    if (m_importJob)
        return;
    check({QDir(base).absolutePath(), QDir(folder).absolutePath()}, QDir(folder).absolutePath());
}

void ModelsPanel::check(const ModelSource& source, const QString& path) {
    m_importing = path;
    m_status->setText(tr("Checking %1…").arg(m_importing));
    auto finished = [this](bool ok) {
        m_importJob = 0;
        updateButtons();
        Q_EMIT importFinished(ok);
    };
    // Loading it on the lab engine checks every file of it.
    m_importJob = m_lab.load(
        this, source.folder, source.options(),
        [this, finished, source](const engine::ModelInfo& info) {
            m_catalog.add(m_importing, QFileInfo(m_importing).fileName(),
                          QString::fromStdString(info.identity),
                          source.adapter.isEmpty() ? QString() : source.folder);
            m_status->setText(
                source.adapter.isEmpty()
                    ? tr("Imported %1: %2 layers, %3 wide, %4 parameters, %5 weights, %6 "
                         "tokenizer.")
                          .arg(QFileInfo(m_importing).fileName())
                          .arg(info.config.nLayer)
                          .arg(info.config.nEmbd)
                          .arg(info.parameterCount)
                          .arg(QString::fromStdString(info.storageDtype),
                               QString::fromStdString(info.tokenizerKind))
                    : tr("Imported the recurrence adapter %1 on %2.")
                          .arg(QFileInfo(m_importing).fileName(),
                               QFileInfo(source.folder).fileName()));
            finished(true);
        },
        [this, finished](const engine::Error& error) {
            m_status->setText(tr("%1 was not imported.").arg(m_importing));
            Q_EMIT failed(tr("This folder is not a model Baton can use"),
                          describeEngineError(error));
            finished(false);
        },
        [this](double fraction, const QString& message) {
            m_status->setText(tr("Checking %1… %2% %3")
                                  .arg(QFileInfo(m_importing).fileName())
                                  .arg(int(fraction * 100))
                                  .arg(message));
        });
    updateButtons();
}

void ModelsPanel::download(const QString& repo) {
    if (m_downloader->running() || m_importJob)
        return;
    if (!m_downloader->start(repo, m_downloadFolder))
        return; // failed says why
    m_status->setText(tr("Downloading %1…").arg(repo.trimmed()));
    m_progress->setRange(0, 0); // busy until the file list has come
    m_progress->show();
    m_cancelDownload->show();
    updateButtons();
}

void ModelsPanel::cancelDownload() {
    m_downloader->cancel();
}

bool ModelsPanel::downloading() const {
    return m_downloader->running();
}

void ModelsPanel::onDownloadProgress(const QString& file, qint64 done, qint64 total, double rate,
                                     double secondsLeft) {
    // Per mille, so that files of many GB fit an int.
    m_progress->setRange(0, 1000);
    m_progress->setValue(total > 0 ? int(1000 * double(done) / double(total)) : 0);
    QString left;
    if (secondsLeft >= 0)
        left = secondsLeft >= 60 ? tr(", %1 min left").arg(int(secondsLeft / 60 + 0.5))
                                 : tr(", %1 s left").arg(int(secondsLeft + 0.5));
    m_status->setText(
        tr("Downloading %1: %2 of %3, %4/s%5")
            .arg(file, formatBytes(done), formatBytes(total), formatBytes(qint64(rate)), left));
}

QString ModelsPanel::selectedPath() const {
    const QTreeWidgetItem* item = m_list->currentItem();
    return item ? item->data(NameColumn, kPathRole).toString() : QString();
}

void ModelsPanel::selectPath(const QString& path) {
    for (QTreeWidgetItemIterator it(m_list); *it; ++it)
        if ((*it)->data(NameColumn, kPathRole).toString() == path)
            m_list->setCurrentItem(*it);
}

void ModelsPanel::setActivePath(const QString& path) {
    m_active = QDir(path).absolutePath();
    rebuild();
}

engine::WeightFormat ModelsPanel::weights() const {
    return static_cast<engine::WeightFormat>(m_weights->currentData().toInt());
}

void ModelsPanel::setWeights(engine::WeightFormat weights) {
    const int i = m_weights->findData(int(weights));
    if (i >= 0)
        m_weights->setCurrentIndex(i);
}

void ModelsPanel::rebuild() {
    const QString keep = selectedPath();
    m_list->clear();
    // Models first, each adapter under the model it goes on (at the top level when its
    // base is not in the list).
    QHash<QString, QTreeWidgetItem*> items;
    bool nested = false;
    for (int pass = 0; pass < 2; ++pass)
        for (const CatalogModel& m : m_catalog.models()) {
            if (m.isAdapter() != (pass == 1))
                continue;
            QTreeWidgetItem* base = m.isAdapter() ? items.value(m.adapterBase) : nullptr;
            nested = nested || base;
            auto* item = base ? new QTreeWidgetItem(base) : new QTreeWidgetItem(m_list);
            items.insert(m.path, item);
            QString name = m.name;
            if (m.isDefault)
                name += tr("  (default)");
            if (m.path == m_active)
                name += tr("  · writing");
            item->setText(NameColumn, name);
            item->setData(NameColumn, kPathRole, m.path);
            item->setToolTip(NameColumn,
                             m.isAdapter() ? tr("%1\non %2").arg(m.path, m.adapterBase) : m.path);
            item->setText(KindColumn, m.bundled       ? tr("bundled")
                                      : m.isAdapter() ? tr("recurrence adapter")
                                      : m.recurrent   ? tr("recurrent")
                                                      : tr("baseline"));
            if (!m.present) {
                item->setText(ShapeColumn,
                              m.isAdapter() ? tr("adapter or base missing") : tr("folder missing"));
                item->setForeground(ShapeColumn, QColor(0xb0, 0x30, 0x20));
            } else {
                item->setText(
                    ShapeColumn,
                    tr("%1 layers × %2, %3 heads").arg(m.layers).arg(m.width).arg(m.heads));
                item->setText(WindowColumn,
                              m.recurrent ? tr("trained at T %1, o %2").arg(m.window).arg(m.overlap)
                                          : tr("%1 positions").arg(m.positions));
                item->setText(SizeColumn, formatBytes(m.bytes));
            }
            if (m.isDefault || m.path == m_active) {
                QFont f = item->font(NameColumn);
                f.setWeight(QFont::DemiBold);
                item->setFont(NameColumn, f);
            }
        }
    m_list->setRootIsDecorated(nested);
    m_list->expandAll();
    if (!keep.isEmpty())
        selectPath(keep);
    updateButtons();
}

void ModelsPanel::updateButtons() {
    const auto m = m_catalog.byPath(selectedPath());
    const bool busy = m_importJob != 0 || m_downloader->running();
    m_import->setEnabled(!busy);
    m_download->setEnabled(!busy);
    m_use->setEnabled(m && m->present && m->path != m_active);
    m_addRecurrence->setEnabled(m && m->present && !m->recurrent && !m->isAdapter());
    m_default->setEnabled(m && m->present && !m->isDefault);
    m_remove->setEnabled(m && !m->bundled);
}

} // namespace baton::ui
