// The model manager: the catalog's models with their shape, trained windows and size;
// download a GPT-2 model from the Hugging Face Hub (model_download.h: off the GUI
// thread, with progress and Cancel), then import it like a folder; import a Hugging
// Face GPT-2 folder (validated by loading it on the lab engine, so
// every problem the loader finds is reported before anything is registered), choose
// the model to write with, set the default, forget an imported one. The bundled
// models are always listed. The weights option chooses how the writing model holds its
// weights in memory (32-bit exact, 16-bit or 8-bit: smaller and faster to decode).
#pragma once

#include "error_text.h"

#include <baton/engine/qt/model_jobs.h>

#include <QWidget>

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTreeWidget;

namespace baton::ui {

class ModelCatalog;
class ModelDownload;
struct ModelSource;

class ModelsPanel : public QWidget {
    Q_OBJECT
public:
    ModelsPanel(ModelCatalog& catalog, engine::ModelJobs& lab, QWidget* parent = nullptr);

    // Validates and registers a folder (what the Import button does after its dialog).
    // A recurrence adapter's folder goes on its base: the catalog's model with the
    // identity its adapter.json names, else one the writer picks.
    void importFolder(const QString& folder);
    // Validates an adapter on a base (by loading both) and registers it.
    void importAdapter(const QString& folder, const QString& base);
    // Downloads a repository ("owner/name[@revision]") into the models folder, then
    // imports it (what the Download button does after its dialog).
    void download(const QString& repo);
    void cancelDownload();
    bool downloading() const;
    // Where downloads go (app/paths.h: defaultModelsFolder, unless set).
    void setDownloadFolder(const QString& folder) { m_downloadFolder = folder; }
    QString downloadFolder() const { return m_downloadFolder; }
    // The selected model's folder ("" when none).
    QString selectedPath() const;
    void selectPath(const QString& path);
    // The folder the writing engine has loaded (marked in the list).
    void setActivePath(const QString& path);
    // How the writing model holds its weights (the option's current choice).
    engine::WeightFormat weights() const;
    void setWeights(engine::WeightFormat weights);

Q_SIGNALS:
    // "Use for writing": load this folder in the writing engine.
    void useRequested(QString folder);
    // "Add recurrence…": train a recurrence adapter for this baseline model.
    void addRecurrenceRequested(QString base);
    void importFinished(bool ok);
    // The user chose another weight format.
    void weightsChanged(baton::engine::WeightFormat weights);
    void failed(QString what, baton::ui::ErrorText error);

private:
    void rebuild();
    // Loads `source` on the lab engine (which checks every file), then registers it.
    void check(const ModelSource& source, const QString& path);
    void updateButtons();
    void onDownloadProgress(const QString& file, qint64 done, qint64 total, double rate,
                            double secondsLeft);

    ModelCatalog& m_catalog;
    engine::ModelJobs& m_lab;
    QTreeWidget* m_list = nullptr;
    QComboBox* m_weights = nullptr;
    QLabel* m_status = nullptr;
    QPushButton* m_import = nullptr;
    QPushButton* m_download = nullptr;
    QPushButton* m_cancelDownload = nullptr;
    QProgressBar* m_progress = nullptr;
    ModelDownload* m_downloader = nullptr;
    QString m_downloadFolder;
    QPushButton* m_use = nullptr;
    QPushButton* m_addRecurrence = nullptr;
    QPushButton* m_default = nullptr;
    QPushButton* m_remove = nullptr;
    QString m_active;
    QString m_importing;
    engine::JobId m_importJob = 0;
};

} // namespace baton::ui
