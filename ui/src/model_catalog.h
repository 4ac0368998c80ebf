// The models the user can choose: every folder registered in the database (the
// bundled ones are registered on every start, so they are always present), with a
// summary read from their config.json / baton.json (no weights are loaded) and their
// size on disk. One catalog is shared by the window's panels.
//
// A recurrence adapter (train --adapter) is registered by its own folder, with the
// base folder it goes on (stored in the entry's config JSON as "adapter_base"): the
// catalog's path of an adapter names base and adapter together, so a story, the
// writing model and every page refer to "this model with recurrence" by one path, and
// source() says what the engine loads for it.
#pragma once

#include <baton/engine/model.h>
#include <baton/engine/model_info.h>
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
    QString identity; // as registered (ModelInfo::identity; "" when not known)
    bool bundled = false;
    bool isDefault = false;
    bool present = true; // the folder still holds a config.json
    // From config.json / baton.json.
    int layers = 0, width = 0, heads = 0, positions = 0, vocabulary = 0;
    bool recurrent = false;
    int window = 0, overlap = 0; // a recurrent model's trained T and o
    qint64 bytes = 0;            // files in the folder
    // An adapter: the base model's folder (the shape above is the base's, bytes the
    // adapter's); "" for a model folder.
    QString adapterBase;
    bool isAdapter() const { return !adapterBase.isEmpty(); }
    QString summary() const; // "4 layers × 256 · recurrent, T 128, o 0 · 11 MB"
};

// What a folder's config.json and baton.json say (errors give present = false); with
// adapterBase, the adapter folder on that base.
CatalogModel readModelFolder(const QString& folder, const QString& adapterBase = {});
QString formatBytes(qint64 bytes);

// What the engine loads for a catalog path: a model folder, or an adapter's base
// folder with the adapter (LoadOptions::adapter).
struct ModelSource {
    QString folder;
    QString adapter;
    // Load options with the adapter set (the rest as given).
    engine::LoadOptions options(engine::LoadOptions base = {}) const {
        base.adapter = adapter.toStdString();
        return base;
    }
};
// The catalog path of a loaded model: its adapter's folder, else its own.
QString catalogPath(const engine::ModelInfo& info);
// A loaded model's name: its folder's, "+ recurrence (ADAPTER)" with an adapter (the
// name it is registered by, when given).
QString modelName(const engine::ModelInfo& info, const QString& adapterName = {});
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
    // What to load for a path: an adapter's base and the adapter, any other path as it
    // is; an adapter folder that is not in the catalog has no base (folder "").
    ModelSource source(const QString& path) const;
    bool loaded() const { return m_loaded; }

    // Registers a folder (or renames it when it is registered already); an adapter
    // folder with the base folder it goes on.
    void add(const QString& folder, const QString& name, const QString& identity,
             const QString& adapterBase = {});
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
