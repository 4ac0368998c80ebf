#include "model_catalog.h"

#include <baton/engine/model.h>

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

namespace baton::ui {

QString formatBytes(qint64 bytes) {
    if (bytes >= (qint64(1) << 30))
        return QStringLiteral("%1 GB").arg(double(bytes) / double(1 << 30), 0, 'f', 1);
    if (bytes >= (1 << 20))
        return QStringLiteral("%1 MB").arg(double(bytes) / double(1 << 20), 0, 'f', 0);
    return QStringLiteral("%1 kB").arg((bytes + 1023) / 1024);
}

QString CatalogModel::summary() const {
    if (!present)
        return ModelCatalog::tr("missing: %1").arg(path);
    if (isAdapter())
        return ModelCatalog::tr("recurrence adapter on %1 · T %2, o %3 · %4")
            .arg(QFileInfo(adapterBase).fileName())
            .arg(window)
            .arg(overlap)
            .arg(formatBytes(bytes));
    QString s = ModelCatalog::tr("%1 layers × %2").arg(layers).arg(width);
    s += recurrent ? ModelCatalog::tr(" · recurrent, T %1, o %2").arg(window).arg(overlap)
                   : ModelCatalog::tr(" · baseline");
    s += QStringLiteral(" · ") + formatBytes(bytes);
    return s;
}

CatalogModel readModelFolder(const QString& folder, const QString& adapterBase) {
    const engine::ModelFolderSummary probe =
        adapterBase.isEmpty()
            ? engine::probeModelFolder(folder.toStdString())
            : engine::probeModelFolder(adapterBase.toStdString(), folder.toStdString());
    CatalogModel m;
    m.path = folder;
    m.adapterBase = adapterBase;
    m.name = QFileInfo(folder).fileName();
    m.present = probe.present;
    if (!probe.present)
        return m;
    m.layers = probe.config.nLayer;
    m.width = probe.config.nEmbd;
    m.heads = probe.config.nHead;
    m.positions = probe.config.nPositions;
    m.vocabulary = probe.config.vocabSize;
    if (probe.recurrence) {
        m.recurrent = true;
        m.window = probe.recurrence->window;
        m.overlap = probe.recurrence->overlap;
    }
    m.bytes = probe.bytes;
    return m;
}

ModelCatalog::ModelCatalog(storage::StorageController& storage, QStringList bundledFolders,
                           QObject* parent)
    : QObject(parent)
    , m_storage(storage)
    , m_bundled(std::move(bundledFolders)) {}

std::function<void(const storage::StorageError&)> ModelCatalog::reportAs(const QString& what) {
    return [this, what](const storage::StorageError& error) { Q_EMIT failed(what, error); };
}

void ModelCatalog::refresh() {
    std::vector<std::string> bundled;
    for (const QString& b : m_bundled)
        bundled.push_back(QDir(b).absolutePath().toStdString());
    // Registering the bundled folders and reading the list in one request: the list
    // always holds them.
    m_storage.listModels(
        bundled, this,
        [this](std::vector<storage::RegisteredModel> list) {
            m_models.clear();
            for (const auto& r : list) {
                const QJsonObject config =
                    QJsonDocument::fromJson(QByteArray::fromStdString(r.configJson)).object();
                CatalogModel m =
                    readModelFolder(QString::fromStdString(r.path),
                                    config.value(QStringLiteral("adapter_base")).toString());
                m.id = r.id;
                m.name = QString::fromStdString(r.name);
                m.identity = QString::fromStdString(r.checksum);
                m.isDefault = r.isDefault;
                for (const QString& b : m_bundled)
                    m.bundled = m.bundled || QDir(b).absolutePath() == m.path;
                m_models.push_back(m);
            }
            // Bundled first, then by name.
            std::stable_sort(m_models.begin(), m_models.end(),
                             [](const CatalogModel& a, const CatalogModel& b) {
                                 if (a.bundled != b.bundled)
                                     return a.bundled;
                                 return a.name.localeAwareCompare(b.name) < 0;
                             });
            m_loaded = true;
            Q_EMIT changed();
        },
        reportAs(tr("The list of models could not be read")));
}

std::optional<CatalogModel> ModelCatalog::byPath(const QString& path) const {
    const QString abs = QDir(path).absolutePath();
    for (const auto& m : m_models)
        if (m.path == abs)
            return m;
    return std::nullopt;
}

ModelSource ModelCatalog::source(const QString& path) const {
    if (auto m = byPath(path); m && m->isAdapter())
        return {m->adapterBase, m->path};
    if (QFileInfo::exists(QDir(path).filePath(QStringLiteral("adapter.json"))))
        return {QString(), QDir(path).absolutePath()};
    return {path, QString()};
}

QString catalogPath(const engine::ModelInfo& info) {
    return QString::fromStdString(info.adapter.empty() ? info.path : info.adapter);
}

QString modelName(const engine::ModelInfo& info, const QString& adapterName) {
    const QString base = QFileInfo(QString::fromStdString(info.path)).fileName();
    if (info.adapter.empty())
        return base;
    // Else the adapter's folder, or its run's when it is OUT/adapter.
    QFileInfo adapter(QString::fromStdString(info.adapter));
    QString name = adapterName.isEmpty() ? adapter.fileName() : adapterName;
    if (name == QLatin1String("adapter"))
        name = adapter.dir().dirName();
    return ModelCatalog::tr("%1 + recurrence (%2)").arg(base, name);
}

std::optional<CatalogModel> ModelCatalog::defaultModel() const {
    for (const auto& m : m_models)
        if (m.isDefault && m.present)
            return m;
    for (const auto& m : m_models)
        if (m.bundled && m.present)
            return m;
    return std::nullopt;
}

void ModelCatalog::add(const QString& folder, const QString& name, const QString& identity,
                       const QString& adapterBase) {
    storage::RegisteredModel m;
    m.path = QDir(folder).absolutePath().toStdString();
    m.name = name.toStdString();
    m.checksum = identity.toStdString();
    if (!adapterBase.isEmpty())
        m.configJson = QJsonDocument(QJsonObject{{QStringLiteral("adapter_base"),
                                                  QDir(adapterBase).absolutePath()}})
                           .toJson(QJsonDocument::Compact)
                           .toStdString();
    m_storage.registerModel(
        m, this, [this](int64_t) { refresh(); }, reportAs(tr("The model could not be registered")));
}

void ModelCatalog::setDefault(qint64 id) {
    m_storage.setDefaultModel(
        id, this, [this](bool) { refresh(); }, reportAs(tr("The default model could not be set")));
}

void ModelCatalog::remove(qint64 id) {
    for (const auto& m : m_models)
        if (m.id == id && m.bundled)
            return;
    m_storage.removeModel(
        id, this, [this](bool) { refresh(); }, reportAs(tr("The model could not be removed")));
}

} // namespace baton::ui
