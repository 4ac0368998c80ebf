// The models the user can choose: every folder registered in the database (the
// bundled ones are registered on every start, so they are always present), with a
// summary read from their config.json / baton.json (no weights are loaded) and their
// size on disk. One catalog is shared by the window's panels.
#pragma once

#include <baton/storage/qt/storage_controller.h>
#include <baton/storage/records.h>

#include <QObject>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>
#include <vector>

namespace baton::ui {

struct CatalogModel {
    qint64 id = 0;
    QString name;
    QString path;
    bool bundled = false;
    bool isDefault = false;
    bool present = true; // the folder still holds a config.json
    // From config.json / baton.json.
    int layers = 0, width = 0, heads = 0, positions = 0, vocabulary = 0;
    bool recurrent = false;
    int window = 0, overlap = 0; // a recurrent model's trained T and o
    qint64 bytes = 0;            // files in the folder
    QString summary() const;     // "4 layers × 256 · recurrent, T 128, o 0 · 11 MB"
};

// What a folder's config.json and baton.json say (errors give present = false).
CatalogModel readModelFolder(const QString& folder);
QString formatBytes(qint64 bytes);

class ModelCatalog : public QObject {
    Q_OBJECT
public:
    ModelCatalog(storage::StorageController& storage, QStringList bundledFolders,
                 QObject* parent = nullptr);

    // Registers the bundled folders that are missing, then reads the list.
    void refresh();
    const std::vector<CatalogModel>& models() const { return m_models; }
    std::optional<CatalogModel> byPath(const QString& path) const;
    std::optional<CatalogModel> defaultModel() const;
    bool loaded() const { return m_loaded; }

    // Registers a folder (or renames it when it is registered already).
    void add(const QString& folder, const QString& name, const QString& identity);
    void setDefault(qint64 id);
    // Forgets a registered model (the folder is not deleted); bundled ones stay.
    void remove(qint64 id);

Q_SIGNALS:
    void changed();
    void failed(QString what, baton::storage::StorageError error);

private:
    std::function<void(const storage::StorageError&)> reportAs(const QString& what);

    storage::StorageController& m_storage;
    QStringList m_bundled;
    std::vector<CatalogModel> m_models;
    bool m_loaded = false;
};

} // namespace baton::ui
