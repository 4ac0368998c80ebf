// "Download a model": the official GPT-2 sizes and DistilGPT2 by name, with their
// parameters and download sizes, or any Hugging Face repository id.
#pragma once

#include <QDialog>

class QLineEdit;
class QListWidget;

namespace baton::ui {

class DownloadDialog : public QDialog {
    Q_OBJECT
public:
    // destination: where the model folder goes (shown).
    explicit DownloadDialog(const QString& destination, QWidget* parent = nullptr);
    // "owner/name[@revision]" as chosen or typed.
    QString repository() const;
    void setRepository(const QString& repo);

private:
    QListWidget* m_offers = nullptr;
    QLineEdit* m_repo = nullptr;
};

} // namespace baton::ui
