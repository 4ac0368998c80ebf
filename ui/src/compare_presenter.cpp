#include "compare_presenter.h"

#include "model_catalog.h"
#include "panel_util.h"

#include <baton/engine/windows.h>

#include <QCryptographicHash>
#include <QDateTime>
#include <QFileInfo>
#include <QRegularExpression>

#include <algorithm>
#include <map>
#include <tuple>

namespace baton::ui {

bool parseNumberList(const QString& text, std::vector<int>& out) {
    out.clear();
    for (const QString& part :
         text.split(QRegularExpression(QStringLiteral("[,;\\s]+")), Qt::SkipEmptyParts)) {
        bool good = false;
        const int v = part.toInt(&good);
        if (!good) {
            out.clear();
            return false;
        }
        if (std::find(out.begin(), out.end(), v) == out.end())
            out.push_back(v);
    }
    return true;
}

ComparePresenter::ComparePresenter(LabBackend& backend, const ModelCatalog& catalog,
                                   QObject* parent)
    : QObject(parent)
    , m_backend(backend)
    , m_catalog(catalog) {
    qRegisterMetaType<std::vector<StoredText>>();
}

engine::JobId ComparePresenter::send(const Pending& p,
                                     const std::function<engine::JobId(LabAnswers)>& ask) {
    auto id = std::make_shared<engine::JobId>(0);
    LabAnswers a;
    a.loaded = [this, p](const engine::ModelInfo& info) { m_configs.insert(p.model, info.config); };
    a.row = [this, id](const engine::EvaluationRow& row) {
        if (row.withState)
            onRow(*id, row.score);
    };
    a.progress = [this, p](double fraction, const QString&) {
        if (p.kind == Pending::Evaluate && m_evalJobs > 0)
            Q_EMIT progress((m_evalDone + fraction) / m_evalJobs);
    };
    a.text = [this, p](const engine::GenerationProgress& g) {
        if (p.kind == Pending::Continue)
            Q_EMIT continuationText(p.side, QString::fromStdString(g.text));
    };
    a.finished = [this, id](const std::optional<engine::Error>& error) { onFinished(*id, error); };
    *id = ask(std::move(a));
    m_jobs.insert(*id, p);
    return *id;
}

QString ComparePresenter::modelName(const QString& path) const {
    if (auto m = m_catalog.byPath(path))
        return m->name;
    return QFileInfo(path).fileName();
}

std::vector<storage::EvalResult> ComparePresenter::latestRows() const {
    std::map<std::tuple<std::string, int, int>, storage::EvalResult> by;
    for (const auto& r : m_rows)
        by[{r.modelPath, r.window, r.overlap}] = r;
    std::vector<storage::EvalResult> out;
    for (auto& [key, r] : by)
        out.push_back(r);
    return out;
}

bool ComparePresenter::evaluate(const CompareRequest& request) {
    if (running())
        return false;
    auto refuse = [this](const QString& why) {
        Q_EMIT status(why);
        return false;
    };
    std::vector<int> windows, overlaps;
    if (!parseNumberList(request.windows, windows) ||
        !parseNumberList(request.overlaps, overlaps) || windows.empty() || overlaps.empty())
        return refuse(tr("Give the window sizes and overlaps as numbers separated by commas, "
                         "e.g. 128 and 0, 32, 64."));
    std::vector<engine::WindowSettings> settings;
    QStringList skipped;
    for (int t : windows)
        for (int o : overlaps) {
            if (t < 2 || o < 0 || o >= t) {
                skipped << QStringLiteral("T %1 o %2").arg(t).arg(o);
                continue;
            }
            settings.push_back({t, o});
        }
    if (settings.empty())
        return refuse(tr("No valid setting: every overlap must be at least 0 and smaller than "
                         "its window."));
    QStringList models;
    for (const QString& m : request.models)
        if (!m.isEmpty() && !models.contains(m))
            models << m;
    if (models.isEmpty())
        return refuse(tr("Choose a model."));
    if (request.text.trimmed().isEmpty())
        return refuse(tr("There is no text to evaluate on."));
    const QByteArray utf8 = request.text.toUtf8();
    m_textLabel = request.label;
    m_textHash = QString::fromLatin1(
        QCryptographicHash::hash(utf8, QCryptographicHash::Sha256).toHex().left(16));
    m_rows.clear();
    Q_EMIT rowsChanged();
    m_failed = false;
    m_evalJobs = int(models.size());
    m_evalDone = 0;
    engine::EvaluateRequest req;
    req.text = utf8.toStdString();
    req.settings = settings;
    for (const QString& m : models) {
        send({m, Pending::Load, 0},
             [&](LabAnswers a) { return m_backend.loadModel(m_catalog.source(m), a); });
        send({m, Pending::Evaluate, 0}, [&](LabAnswers a) { return m_backend.evaluate(req, a); });
    }
    QString text = tr("Evaluating %1 on %2 (%3)…")
                       .arg(countText(qint64(settings.size()), tr("1 setting"), tr("%1 settings")))
                       .arg(request.label)
                       .arg(countText(request.text.size(), tr("1 character"), tr("%1 characters")));
    if (!skipped.isEmpty())
        text += tr(" Skipped (overlap not below the window): %1.").arg(skipped.join(", "));
    Q_EMIT status(text);
    Q_EMIT progress(0);
    Q_EMIT busyChanged(true);
    return true;
}

void ComparePresenter::cancel() {
    for (auto it = m_jobs.begin(); it != m_jobs.end(); ++it)
        m_backend.cancel(it.key());
}

bool ComparePresenter::continueBoth(const QString& prompt,
                                    const std::array<ContinuationSetting, 2>& settings,
                                    int tokens) {
    if (running())
        return false;
    if (prompt.trimmed().isEmpty()) {
        Q_EMIT status(tr("Write a prompt to continue."));
        return false;
    }
    for (int side = 0; side < 2; ++side) {
        const ContinuationSetting& s = settings[size_t(side)];
        if (s.model.isEmpty()) {
            Q_EMIT status(tr("Choose a model for both settings."));
            return false;
        }
        if (s.overlap >= s.window || s.overlap < 0) {
            Q_EMIT status(tr("Setting %1: the overlap must be smaller than the window.")
                              .arg(side == 0 ? "A" : "B"));
            return false;
        }
    }
    m_failed = false;
    m_evalJobs = 0;
    for (int side = 0; side < 2; ++side) {
        const ContinuationSetting& s = settings[size_t(side)];
        Q_EMIT continuationStarted(side, prompt);
        engine::GenerateRequest req;
        req.prompt = prompt.toStdString(); // after start-of-text, as every caller reads it
        req.sampling.temperature = 0.8;
        req.sampling.topP = 0.95;
        req.sampling.seed = kContinuationSeed; // the same draws for both settings
        req.sampling.maxTokens = tokens;
        req.windows = {s.window, s.overlap};
        send({s.model, Pending::Load, side},
             [&](LabAnswers a) { return m_backend.loadModel(m_catalog.source(s.model), a); });
        send({s.model, Pending::Continue, side},
             [&](LabAnswers a) { return m_backend.generate(req, a); });
    }
    Q_EMIT status(tr("Continuing the prompt under both settings (same seed)…"));
    Q_EMIT busyChanged(true);
    return true;
}

void ComparePresenter::onRow(engine::JobId job, const engine::ScoreResult& row) {
    const auto it = m_jobs.find(job);
    if (it == m_jobs.end())
        return;
    storage::EvalResult r;
    r.modelPath = it->model.toStdString();
    if (auto m = m_catalog.byPath(it->model))
        r.modelId = m->id;
    r.textId = m_textLabel.toStdString();
    r.textHash = m_textHash.toStdString();
    r.window = row.windows.window;
    r.overlap = row.windows.overlap;
    r.scoredTokens = row.scoredTokens;
    r.nll = row.nllSum;
    r.tokenPpl = row.tokenPerplexity;
    r.wordPpl = row.wordPerplexity;
    if (m_configs.contains(it->model))
        r.flopsPerToken = engine::flopsPerToken(m_configs.value(it->model), row.windows, false);
    r.seconds = row.seconds;
    r.createdAt = QDateTime::currentMSecsSinceEpoch();
    m_rows.push_back(r);
    m_backend.storeEvalResult(r, reportAs(tr("The result could not be stored")));
    Q_EMIT rowsChanged();
}

void ComparePresenter::onFinished(engine::JobId job, const std::optional<engine::Error>& failure) {
    const auto it = m_jobs.find(job);
    if (it == m_jobs.end())
        return;
    const Pending p = *it;
    m_jobs.erase(it);
    if (p.kind == Pending::Evaluate)
        ++m_evalDone;
    const engine::Error error = failure.value_or(engine::Error{});
    if (failure) {
        if (!m_failed && error.code != engine::ErrorCode::Cancelled)
            Q_EMIT failed(p.kind == Pending::Load
                              ? tr("%1 could not be loaded").arg(modelName(p.model))
                              : tr("The comparison with %1 failed").arg(modelName(p.model)),
                          describeEngineError(error));
        m_failed = true;
        // The rest of the run depends on this job: cancel it.
        cancel();
    }
    if (!m_jobs.isEmpty())
        return;
    const bool wasContinuation = p.kind == Pending::Continue || m_evalJobs == 0;
    Q_EMIT busyChanged(false);
    if (m_failed)
        Q_EMIT status(error.code == engine::ErrorCode::Cancelled ? tr("Cancelled.")
                                                                 : tr("Stopped by an error."));
    else
        Q_EMIT status(
            wasContinuation
                ? tr("Both continuations are done (seed %1).").arg(kContinuationSeed)
                : tr("Done: %1 stored.")
                      .arg(countText(qint64(m_rows.size()), tr("1 result"), tr("%1 results"))));
    Q_EMIT progress(m_failed ? 0 : 1);
    refreshHistory();
    if (wasContinuation)
        Q_EMIT continuationsFinished();
    else
        Q_EMIT finished(!m_failed);
}

void ComparePresenter::refreshHistory() {
    m_backend.evalResults(
        [this](std::vector<storage::EvalResult> all) {
            // One entry per text (newest first), with how many results it has.
            std::map<std::string, StoredText> texts;
            for (const auto& r : all) {
                StoredText& t = texts[r.textHash];
                if (t.results == 0 || r.createdAt >= t.newest) {
                    t.hash = QString::fromStdString(r.textHash);
                    t.label = QString::fromStdString(r.textId);
                    t.newest = r.createdAt;
                }
                ++t.results;
            }
            std::vector<StoredText> list;
            for (auto& [hash, t] : texts)
                list.push_back(t);
            std::sort(list.begin(), list.end(),
                      [](const StoredText& x, const StoredText& y) { return x.newest > y.newest; });
            Q_EMIT storedTextsChanged(list);
        },
        reportAs(tr("The stored results could not be read")));
}

void ComparePresenter::reopen(const QString& textHash) {
    const std::string hash = textHash.toStdString();
    m_backend.evalResults(
        [this, hash](std::vector<storage::EvalResult> all) {
            m_rows.clear();
            for (auto& r : all)
                if (r.textHash == hash)
                    m_rows.push_back(std::move(r));
            m_textHash = QString::fromStdString(hash);
            if (!m_rows.empty())
                m_textLabel = QString::fromStdString(m_rows.front().textId);
            Q_EMIT rowsChanged();
            Q_EMIT status(tr("%1 for %2.")
                              .arg(countText(qint64(m_rows.size()), tr("1 stored result"),
                                             tr("%1 stored results")))
                              .arg(m_textLabel));
        },
        reportAs(tr("The stored results could not be read")));
}

LabBackend::Failed ComparePresenter::reportAs(const QString& what) {
    return [this, what](const storage::StorageError& error) {
        Q_EMIT failed(what, describeStorageError(error));
    };
}

} // namespace baton::ui
