#include "model_catalog.h"

#include <baton/storage/database.h>
#include <baton/storage/model_store.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

namespace baton::ui {

namespace {

QJsonObject readJson(const QString& path, bool* ok) {
    QFile f(path);
    *ok = false;
    if (!f.open(QIODevice::ReadOnly) || f.size() > (1 << 20))
        return {};
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll());
    *ok = doc.isObject();
    return doc.object();
}

} // namespace

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
    QString s = ModelCatalog::tr("%1 layers × %2").arg(layers).arg(width);
    s += recurrent ? ModelCatalog::tr(" · recurrent, T %1, o %2").arg(window).arg(overlap)
                   : ModelCatalog::tr(" · baseline");
    s += QStringLiteral(" · ") + formatBytes(bytes);
    return s;
}

CatalogModel readModelFolder(const QString& folder) {
    CatalogModel m;
    m.path = folder;
    m.name = QFileInfo(folder).fileName();
    bool ok = false;
    const QJsonObject config = readJson(folder + QStringLiteral("/config.json"), &ok);
    m.present = ok;
    if (!ok)
        return m;
    m.layers = config.value(QStringLiteral("n_layer")).toInt();
    m.width = config.value(QStringLiteral("n_embd")).toInt();
    m.heads = config.value(QStringLiteral("n_head")).toInt();
    m.positions = config.value(QStringLiteral("n_positions")).toInt();
    m.vocabulary = config.value(QStringLiteral("vocab_size")).toInt();
    const QJsonObject baton = readJson(folder + QStringLiteral("/baton.json"), &ok);
    if (ok) {
        m.recurrent = true;
        m.window = baton.value(QStringLiteral("window")).toInt();
        m.overlap = baton.value(QStringLiteral("overlap")).toInt();
    }
    const QFileInfoList files = QDir(folder).entryInfoList(QDir::Files);
    for (const QFileInfo& f : files)
        m.bytes += f.size();
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
    m_storage.call<std::vector<storage::RegisteredModel>>(
        true,
        [bundled](storage::Database& db) -> storage::Result<std::vector<storage::RegisteredModel>> {
            auto& models = db.models();
            for (const auto& path : bundled) {
                auto have = models.byPath(path);
                if (!have)
                    return have.error();
                if (have->has_value())
                    continue;
                storage::RegisteredModel m;
                m.path = path;
                m.name = QFileInfo(QString::fromStdString(path)).fileName().toStdString();
                m.configJson = R"({"bundled":true})";
                auto added = models.add(m);
                if (!added)
                    return added.error();
            }
            auto def = models.defaultModel();
            if (!def)
                return def.error();
            if (!def->has_value() && !bundled.empty()) {
                auto first = models.byPath(bundled.front());
                if (!first)
                    return first.error();
                if (first->has_value()) {
                    auto set = models.setDefault((*first)->id);
                    if (!set)
                        return set.error();
                }
            }
            return models.list();
        },
        this,
        [this](std::vector<storage::RegisteredModel> list) {
            m_models.clear();
            for (const auto& r : list) {
                CatalogModel m = readModelFolder(QString::fromStdString(r.path));
                m.id = r.id;
                m.name = QString::fromStdString(r.name);
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

std::optional<CatalogModel> ModelCatalog::defaultModel() const {
    for (const auto& m : m_models)
        if (m.isDefault && m.present)
            return m;
    for (const auto& m : m_models)
        if (m.bundled && m.present)
            return m;
    return std::nullopt;
}

void ModelCatalog::add(const QString& folder, const QString& name, const QString& identity) {
    const std::string path = QDir(folder).absolutePath().toStdString();
    const std::string n = name.toStdString();
    const std::string sum = identity.toStdString();
    m_storage.call<int64_t>(
        true,
        [path, n, sum](storage::Database& db) -> storage::Result<int64_t> {
            auto have = db.models().byPath(path);
            if (!have)
                return have.error();
            if (have->has_value()) {
                storage::RegisteredModel m = **have;
                m.name = n;
                m.checksum = sum;
                auto r = db.models().update(m);
                if (!r)
                    return r.error();
                return m.id;
            }
            storage::RegisteredModel m;
            m.path = path;
            m.name = n;
            m.checksum = sum;
            return db.models().add(m);
        },
        this, [this](int64_t) { refresh(); }, reportAs(tr("The model could not be registered")));
}

void ModelCatalog::setDefault(qint64 id) {
    m_storage.call<bool>(
        true,
        [id](storage::Database& db) -> storage::Result<bool> {
            auto r = db.models().setDefault(id);
            if (!r)
                return r.error();
            return true;
        },
        this, [this](bool) { refresh(); }, reportAs(tr("The default model could not be set")));
}

void ModelCatalog::remove(qint64 id) {
    for (const auto& m : m_models)
        if (m.id == id && m.bundled)
            return;
    m_storage.call<bool>(
        true,
        [id](storage::Database& db) -> storage::Result<bool> {
            auto r = db.models().remove(id);
            if (!r)
                return r.error();
            return true;
        },
        this, [this](bool) { refresh(); }, reportAs(tr("The model could not be removed")));
}

} // namespace baton::ui
