#include "finetune_presenter.h"

#include "model_catalog.h"
#include "panel_util.h"

#include <baton/engine/text.h>

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>

namespace baton::ui {

namespace {

QString formatDuration(double seconds) {
    if (!(seconds >= 0) || seconds > 1e7)
        return QStringLiteral("—");
    const qint64 s = qint64(seconds + 0.5);
    if (s >= 3600)
        return QStringLiteral("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60);
    if (s >= 60)
        return QStringLiteral("%1 min %2 s").arg(s / 60).arg(s % 60);
    return QStringLiteral("%1 s").arg(s);
}

} // namespace

QJsonObject recurrencePreset(const CatalogModel& base) {
    // Parameters, roughly: the blocks and the token table.
    const double params =
        12.0 * base.layers * double(base.width) * base.width + double(base.vocabulary) * base.width;
    QJsonObject s;
    s[QStringLiteral("base")] = base.path;
    s[QStringLiteral("mode")] = QStringLiteral("recurrent");
    s[QStringLiteral("scope")] = QStringLiteral("adapter");
    s[QStringLiteral("window")] = base.positions >= 1024 ? 256 : std::min(128, base.positions);
    s[QStringLiteral("overlap")] = 0;
    s[QStringLiteral("bptt_windows")] = params < 50e6 ? 20 : 8;
    s[QStringLiteral("batch_size")] = 2;
    s[QStringLiteral("lr")] = 3e-4;
    s[QStringLiteral("epochs")] = 2.0;
    s[QStringLiteral("name")] =
        QStringLiteral("%1-recurrence").arg(QFileInfo(base.path).fileName());
    return s;
}

std::pair<std::string, std::string> splitForValidation(const std::string& text) {
    size_t cut = text.size() * 9 / 10;
    const size_t para = text.find("\n\n", cut);
    if (para != std::string::npos && para < text.size() - text.size() / 20)
        cut = para;
    while (cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
        ++cut; // never inside a character
    return {text.substr(0, cut), text.substr(cut)};
}

std::vector<std::string> heldOutTexts(const std::vector<storage::Book>& books, size_t maxBytes) {
    std::vector<std::string> texts;
    for (const auto& b : books) {
        std::string t = engine::unwrapText(splitForValidation(b.text).second);
        if (QString::fromStdString(t).trimmed().isEmpty())
            continue;
        texts.push_back(std::move(t));
    }
    const size_t each = texts.empty() ? 0 : maxBytes / texts.size();
    for (auto& t : texts) {
        if (t.size() <= each)
            continue;
        size_t cut = each;
        while (cut > 0 && (static_cast<unsigned char>(t[cut]) & 0xC0) == 0x80)
            --cut; // never inside a character
        t.resize(cut);
    }
    return texts;
}

double HeldOutScore::perplexity() const {
    return tokens > 0 ? std::exp(nll / double(tokens)) : 0.0;
}

FineTunePresenter::FineTunePresenter(LabBackend& backend, ModelCatalog& catalog, QObject* parent)
    : QObject(parent)
    , m_backend(backend)
    , m_catalog(catalog) {}

LabBackend::Failed FineTunePresenter::reportAs(const QString& what) {
    return [this, what](const storage::StorageError& error) {
        Q_EMIT failed(what, describeStorageError(error));
    };
}

void FineTunePresenter::refresh() {
    m_backend.books(
        [this](std::vector<storage::Book> books) {
            m_books = std::move(books);
            Q_EMIT booksChanged();
        },
        reportAs(tr("The books could not be read")));
    m_backend.runs(
        [this](std::vector<storage::TrainingRun> runs) {
            m_resumable = {};
            for (const auto& r : runs) {
                if (r.status == storage::RunStatus::Completed)
                    break; // only the newest unfinished run
                if (r.status == storage::RunStatus::Cancelled ||
                    r.status == storage::RunStatus::Failed ||
                    (r.status == storage::RunStatus::Running && r.id != m_runId)) {
                    const QJsonObject s =
                        QJsonDocument::fromJson(QByteArray::fromStdString(r.configJson)).object();
                    if (QFileInfo::exists(s.value(QStringLiteral("out_dir")).toString())) {
                        m_resumable = r;
                        break;
                    }
                }
            }
            Q_EMIT stateChanged();
        },
        reportAs(tr("The training runs could not be read")));
}

bool FineTunePresenter::start(const QJsonObject& settings) {
    if (running() || m_importing)
        return false;
    auto refuse = [this](const QString& why) {
        Q_EMIT status(why);
        return false;
    };
    if (m_books.empty())
        return refuse(tr("Add at least one book to fine-tune on."));
    if (settings.value(QStringLiteral("base")).toString().isEmpty())
        return refuse(tr("Choose a base model."));
    if (settings.value(QStringLiteral("overlap")).toInt() >=
        settings.value(QStringLiteral("window")).toInt())
        return refuse(tr("The overlap must be smaller than the window."));
    if (m_runsFolder.isEmpty())
        return refuse(tr("No folder for runs: open a story database first."));
    const auto base = m_catalog.byPath(settings.value(QStringLiteral("base")).toString());
    if (settings.value(QStringLiteral("scope")).toString() == QLatin1String("adapter")) {
        if (settings.value(QStringLiteral("mode")).toString() != QLatin1String("recurrent"))
            return refuse(tr("A recurrence adapter is trained in recurrent mode."));
        if (base && (base->recurrent || base->isAdapter()))
            return refuse(tr("%1 carries a recurrence module already: an adapter adds one to a "
                             "baseline model. Train all weights or the module only instead.")
                              .arg(base->name));
    }
    if (base && base->isAdapter())
        return refuse(
            tr("%1 is a recurrence adapter: fine-tune its base model instead.").arg(base->name));
    QJsonObject s = settings;
    QString name = s.value(QStringLiteral("name")).toString();
    if (name.isEmpty())
        name = QStringLiteral("%1-%2").arg(QFileInfo(s.value("base").toString()).fileName(),
                                           s.value("scope").toString() == QLatin1String("adapter")
                                               ? QStringLiteral("recurrence")
                                               : s.value("mode").toString());
    name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("-"));
    s[QStringLiteral("name")] = name;
    const QString outDir =
        QDir(m_runsFolder)
            .absoluteFilePath(QStringLiteral("%1-%2").arg(
                name, QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-hhmmss"))));
    s[QStringLiteral("out_dir")] = outDir;
    std::vector<int64_t> bookIds;
    QJsonArray ids;
    for (const auto& b : m_books) {
        bookIds.push_back(b.id);
        ids.append(qint64(b.id));
    }
    s[QStringLiteral("books")] = ids;
    storage::TrainingRun run;
    if (base)
        run.modelId = base->id;
    run.configJson = QJsonDocument(s).toJson(QJsonDocument::Compact).toStdString();
    run.status = storage::RunStatus::Running;
    m_before = {};
    m_after = {};
    Q_EMIT heldOutChanged();
    Q_EMIT status(tr("Preparing the books…"));
    // The books' texts, then the run recorded; the trainer writes them into its folder.
    m_backend.bookTexts(
        bookIds,
        [this, s, outDir, run](std::vector<storage::Book> books) {
            m_backend.createRun(
                run,
                [this, s, outDir, books = std::move(books)](int64_t runId) {
                    clearCharts();
                    Q_EMIT logCleared();
                    launch(s, outDir, false, runId, books);
                },
                reportAs(tr("The run could not be recorded")));
        },
        reportAs(tr("The books could not be read")));
    return true;
}

void FineTunePresenter::launch(const QJsonObject& s, const QString& outDir, bool resume,
                               qint64 runId, const std::vector<storage::Book>& books) {
    engine::TrainConfig c;
    c.outDir = outDir.toStdString();
    c.resume = resume;
    c.baseModel = s.value(QStringLiteral("base")).toString().toStdString();
    const bool recurrent = s.value(QStringLiteral("mode")).toString() == QLatin1String("recurrent");
    c.mode = recurrent ? engine::TrainMode::Recurrent : engine::TrainMode::Baseline;
    const QString scope = s.value(QStringLiteral("scope")).toString();
    c.adapter = recurrent && scope == QLatin1String("adapter");
    c.scope = recurrent && (scope == QLatin1String("recurrence") || c.adapter)
                  ? engine::TrainScope::Recurrence
                  : engine::TrainScope::All;
    if (c.adapter)
        c.recurrence.slots = kAdapterSlots;
    // Each book cut near 90%: the start to train on, the rest held out for validation,
    // so that a run on a single book still measures held-out perplexity. A resumed run
    // finds them in its folder.
    if (!resume)
        for (const auto& b : books) {
            auto [train, validation] = splitForValidation(b.text);
            const std::string name = std::to_string(b.id) + ".txt";
            c.corpusTexts.push_back({name, std::move(train)});
            c.validationTexts.push_back({name, std::move(validation)});
        }
    c.window = s.value(QStringLiteral("window")).toInt();
    c.overlap = s.value(QStringLiteral("overlap")).toInt();
    c.bpttWindows = recurrent ? s.value(QStringLiteral("bptt_windows")).toInt() : 1;
    c.batchSize = s.value(QStringLiteral("batch_size")).toInt();
    c.lr = s.value(QStringLiteral("lr")).toDouble();
    c.epochs = s.value(QStringLiteral("epochs")).toDouble();
    c.warmupSteps = 20;
    c.validateEveryTokens = 50000;
    c.validationMaxTokens = 20000;
    c.checkpointEverySteps = 50;
    c.saveDtype = "f32";
    m_runId = runId;
    m_runName = s.value(QStringLiteral("name")).toString();
    m_runBase = QString::fromStdString(c.baseModel);
    m_runAdapter = c.adapter;
    m_finished.clear();
    m_stepped = false;
    m_resumed = resume;
    m_checkpointStep = 0;
    m_cancelling = false;
    m_lastStep = 0;
    // The base model on the held-out text first (once per run: a resumed run has its
    // figure), queued before the training job; the fine-tuned model after it.
    m_heldOut = heldOutTexts(books);
    m_heldOutWindows = {c.window, c.overlap};
    if (!m_heldOut.empty() && !m_before.valid())
        measure({m_runBase, {}}, false);
    LabAnswers train;
    train.event = [this](const engine::TrainEvent& e) { onEvent(e); };
    train.finished = [this](const std::optional<engine::Error>& error) {
        onTrainFinished(!error, error.value_or(engine::Error{}));
    };
    m_job = m_backend.train(c, std::move(train));
    if (m_measureJobs.isEmpty())
        Q_EMIT status(resume ? tr("Resuming %1…").arg(m_runName)
                             : tr("Starting %1…").arg(m_runName));
    Q_EMIT logLine(resume ? tr("Resuming in %1").arg(outDir) : tr("Run folder: %1").arg(outDir));
    Q_EMIT progress(0);
    Q_EMIT stateChanged();
}

void FineTunePresenter::cancel() {
    if (m_importJob)
        m_backend.cancelBooks(m_importJob);
    m_cancelling = running();
    for (auto it = m_measureJobs.begin(); it != m_measureJobs.end(); ++it)
        m_backend.cancel(it.key());
    if (m_job)
        m_backend.cancel(m_job);
}

bool FineTunePresenter::resume() {
    if (running() || !m_resumable.id)
        return false;
    const QJsonObject s =
        QJsonDocument::fromJson(QByteArray::fromStdString(m_resumable.configJson)).object();
    Q_EMIT settingsRestored(s);
    const qint64 runId = m_resumable.id;
    // The charts continue from the stored metrics.
    m_backend.resumeRun(
        runId,
        [this, s, runId](std::vector<storage::MetricPoint> points) {
            clearCharts();
            m_before = {};
            m_after = {};
            m_heldOutWindows = {s.value(QStringLiteral("window")).toInt(),
                                s.value(QStringLiteral("overlap")).toInt()};
            for (const auto& p : points) {
                const QPointF pt(double(p.step), p.value);
                if (p.name == "train_loss")
                    m_loss.push_back(pt);
                else if (p.name == "val_ppl")
                    m_valPpl.push_back(pt);
                else if (p.name == "val_ppl_no_state")
                    m_valPplNoState.push_back(pt);
                else if (p.name == "heldout_nll_base")
                    m_before.nll = p.value;
                else if (p.name == "heldout_tokens_base")
                    m_before.tokens = int64_t(p.value);
            }
            Q_EMIT chartsChanged();
            Q_EMIT heldOutChanged();
            // The books again, for the held-out text the fine-tuned model is measured
            // on (the same as the base model's while the books are the same).
            std::vector<int64_t> ids;
            for (const QJsonValue& id : s.value(QStringLiteral("books")).toArray())
                ids.push_back(id.toInteger());
            const QString outDir = s.value(QStringLiteral("out_dir")).toString();
            m_backend.bookTexts(
                ids,
                [this, s, outDir, runId, ids](std::vector<storage::Book> books) {
                    if (books.size() != ids.size())
                        books.clear(); // a book was removed: no comparison
                    launch(s, outDir, true, runId, books);
                },
                [this, s, outDir, runId](const storage::StorageError&) {
                    launch(s, outDir, true, runId, {});
                });
        },
        reportAs(tr("The run's metrics could not be read")));
    m_resumable = {};
    Q_EMIT stateChanged();
    return true;
}

void FineTunePresenter::clearCharts() {
    m_loss.clear();
    m_valPpl.clear();
    m_valPplNoState.clear();
    Q_EMIT chartsChanged();
}

void FineTunePresenter::onEvent(const engine::TrainEvent& e) {
    using Kind = engine::TrainEvent::Kind;
    switch (e.kind) {
    case Kind::Info:
        Q_EMIT logLine(QString::fromStdString(e.message));
        break;
    case Kind::Step:
        // A resumed run goes on from its checkpoint: what the charts hold after it (from
        // a run stopped before it could keep its last steps) is taken back.
        if (!m_loss.empty() && e.step <= int64_t(m_loss.back().x()))
            for (auto* series : {&m_loss, &m_valPpl, &m_valPplNoState})
                series->erase(std::remove_if(series->begin(), series->end(),
                                             [&](const QPointF& p) { return p.x() >= e.step; }),
                              series->end());
        m_stepped = true;
        m_lastStep = e.step;
        m_loss.push_back(QPointF(double(e.step), e.loss));
        if (e.step % 5 == 0 || e.step == e.totalSteps)
            m_unsaved.push_back({m_runId, e.step, "train_loss", e.loss});
        if (e.totalSteps > 0)
            Q_EMIT progress(double(e.step) / double(e.totalSteps));
        Q_EMIT status(tr("%1 · step %2 of %3 · loss %4 · %5 tokens/s · %6 left")
                          .arg(m_runName)
                          .arg(e.step)
                          .arg(e.totalSteps)
                          .arg(e.loss, 0, 'f', 3)
                          .arg(e.tokensPerSecond, 0, 'f', 0)
                          .arg(formatDuration(e.etaSeconds)));
        // The loss chart is redrawn every few steps (cheap, but not per event).
        if (m_loss.size() < 50 || e.step % 5 == 0)
            Q_EMIT chartsChanged();
        break;
    case Kind::Validation:
        m_valPpl.push_back(QPointF(double(e.step), e.valPerplexity));
        m_unsaved.push_back({m_runId, e.step, "val_ppl", e.valPerplexity});
        if (e.valLossNoState > 0) {
            const double noState = std::exp(e.valLossNoState);
            m_valPplNoState.push_back(QPointF(double(e.step), noState));
            m_unsaved.push_back({m_runId, e.step, "val_ppl_no_state", noState});
        }
        Q_EMIT logLine(
            tr("step %1: validation perplexity %2%3")
                .arg(e.step)
                .arg(e.valPerplexity, 0, 'f', 2)
                .arg(e.valLossNoState > 0
                         ? tr(" (state off: %1)").arg(std::exp(e.valLossNoState), 0, 'f', 2)
                         : QString()));
        Q_EMIT chartsChanged();
        break;
    case Kind::Checkpoint:
        m_checkpointStep = e.step;
        Q_EMIT logLine(tr("checkpoint at step %1").arg(e.step));
        if (!m_unsaved.empty()) {
            const auto points = std::move(m_unsaved);
            m_unsaved.clear();
            m_backend.addMetrics(points, reportAs(tr("The run's metrics could not be saved")));
        }
        break;
    case Kind::Done:
        m_finished = QString::fromStdString(e.checkpoint);
        Q_EMIT logLine(tr("%1 at step %2").arg(QString::fromStdString(e.message)).arg(e.step));
        break;
    }
}

void FineTunePresenter::onTrainFinished(bool ok, const engine::Error& error) {
    m_job = 0;
    const bool cancelled = !ok && error.code == engine::ErrorCode::Cancelled;
    const QString finished = ok ? m_finished : QString();
    const auto points = std::move(m_unsaved);
    m_unsaved.clear();
    const storage::RunStatus runStatus =
        ok ? storage::RunStatus::Completed
           : (cancelled ? storage::RunStatus::Cancelled : storage::RunStatus::Failed);
    const std::string message = ok ? "finished" : (cancelled ? "cancelled" : error.message);
    m_backend.finishRun(
        m_runId, points, finished.toStdString(), runStatus, message, [this](bool) { refresh(); },
        reportAs(tr("The run could not be recorded")));
    if (ok) {
        m_catalog.add(finished, m_runName, QString(), m_runAdapter ? m_runBase : QString());
        Q_EMIT logLine(m_runAdapter ? tr("Adapter saved in %1 (on %2)").arg(finished, m_runBase)
                                    : tr("Model saved in %1").arg(finished));
        // The fine-tuned model on the same held-out text, with the same windows.
        if (!m_heldOut.empty() && m_before.valid()) {
            measure(m_runAdapter ? ModelSource{m_runBase, finished} : ModelSource{finished, {}},
                    true);
            Q_EMIT chartsChanged();
            Q_EMIT stateChanged();
            return;
        }
        Q_EMIT status(
            tr("%1 is ready: it is in the model list and can be written with now.").arg(m_runName));
    } else if (cancelled) {
        m_finished.clear();
        if (m_checkpointStep > 0)
            Q_EMIT status(tr("Cancelled. The checkpoint at step %1 was kept: Resume continues "
                             "from it.")
                              .arg(m_checkpointStep));
        else if (m_resumed)
            Q_EMIT status(tr("Cancelled. Resume continues from the run's last checkpoint."));
        else
            Q_EMIT status(m_stepped ? tr("Cancelled before a checkpoint was kept: Resume "
                                         "starts the run again.")
                                    : tr("Cancelled before training began."));
    } else {
        m_finished.clear();
        Q_EMIT status(tr("The run stopped with an error."));
        Q_EMIT failed(tr("Fine-tuning failed"), describeEngineError(error));
    }
    endRun(ok);
}

void FineTunePresenter::endRun(bool ok) {
    if (ok)
        Q_EMIT progress(1);
    Q_EMIT chartsChanged();
    Q_EMIT stateChanged();
    Q_EMIT runFinished(ok);
}

void FineTunePresenter::measure(const ModelSource& model, bool after) {
    m_measuringAfter = after;
    m_measuring = {};
    m_measureFailed = false;
    m_measureError.clear();
    m_measureEvals = int(m_heldOut.size());
    m_measureDone = 0;
    // Answers for a measurement job of `kind`; its id is filled in once asked for.
    auto answers = [this](MeasureJob kind, std::shared_ptr<engine::JobId> id) {
        LabAnswers a;
        a.row = [this](const engine::EvaluationRow& row) {
            if (!row.withState)
                return;
            m_measuring.nll += row.score.nllSum;
            m_measuring.tokens += row.score.scoredTokens;
        };
        a.progress = [this, kind](double fraction, const QString&) {
            if (m_measureEvals > 0 && kind == MeasureJob::Evaluate)
                Q_EMIT progress((m_measureDone + fraction) / m_measureEvals);
        };
        a.finished = [this, id](const std::optional<engine::Error>& error) {
            onMeasureFinished(*id, !error, error.value_or(engine::Error{}));
        };
        return a;
    };
    auto loadId = std::make_shared<engine::JobId>(0);
    *loadId = m_backend.loadModel(model, answers(MeasureJob::Load, loadId));
    m_measureJobs.insert(*loadId, MeasureJob::Load);
    for (const std::string& text : m_heldOut) {
        engine::EvaluateRequest r;
        r.text = text;
        r.settings = {m_heldOutWindows};
        auto id = std::make_shared<engine::JobId>(0);
        *id = m_backend.evaluate(r, answers(MeasureJob::Evaluate, id));
        m_measureJobs.insert(*id, MeasureJob::Evaluate);
    }
    Q_EMIT status(after ? tr("%1 is trained; measuring it on the held-out text…").arg(m_runName)
                        : tr("Measuring the base model on the held-out text before training…"));
    Q_EMIT progress(0);
}

void FineTunePresenter::onMeasureFinished(engine::JobId job, bool ok, const engine::Error& error) {
    const MeasureJob kind = m_measureJobs.take(job);
    if (kind == MeasureJob::Evaluate)
        ++m_measureDone;
    if (!ok) {
        if (!m_measureFailed && error.code != engine::ErrorCode::Cancelled)
            m_measureError = QString::fromStdString(error.message);
        m_measureFailed = true;
        // Without its model the evaluations would score another one: they go.
        if (kind == MeasureJob::Load)
            for (auto it = m_measureJobs.begin(); it != m_measureJobs.end(); ++it)
                m_backend.cancel(it.key());
    }
    if (!m_measureJobs.isEmpty())
        return;
    const bool measured = !m_measureFailed && m_measuring.valid();
    if (measured) {
        (m_measuringAfter ? m_after : m_before) = m_measuring;
        if (!m_measuringAfter) {
            // Stored with the run's metrics (with the next checkpoint), for Resume.
            m_unsaved.push_back({m_runId, 0, "heldout_nll_base", m_measuring.nll});
            m_unsaved.push_back({m_runId, 0, "heldout_tokens_base", double(m_measuring.tokens)});
        } else {
            m_backend.addMetrics(
                {{m_runId, m_lastStep, "heldout_nll", m_measuring.nll},
                 {m_runId, m_lastStep, "heldout_tokens", double(m_measuring.tokens)}},
                reportAs(tr("The run's metrics could not be saved")));
        }
        Q_EMIT logLine(tr("held-out perplexity of the %1 model: %2 on %3")
                           .arg(m_measuringAfter ? tr("fine-tuned") : tr("base"))
                           .arg(m_measuring.perplexity(), 0, 'f', 2)
                           .arg(countText(m_measuring.tokens, tr("1 token"), tr("%1 tokens"))));
    } else if (!m_measureError.isEmpty()) {
        Q_EMIT logLine(tr("The held-out text could not be measured with the %1 model: %2")
                           .arg(m_measuringAfter ? tr("fine-tuned") : tr("base"), m_measureError));
    }
    Q_EMIT heldOutChanged();
    if (!m_measuringAfter) {
        if (m_job && !m_cancelling)
            Q_EMIT status(tr("Starting %1…").arg(m_runName));
        return; // the training job is next in the queue (or was cancelled with these)
    }
    // The figures themselves are in heldOutSummary() (the panel's line below).
    Q_EMIT status(measured ? tr("%1 is ready: it is in the model list and can be written with "
                                "now.")
                                 .arg(m_runName)
                           : tr("%1 is ready: it is in the model list and can be written with "
                                "now (the held-out text was not measured after training).")
                                 .arg(m_runName));
    endRun(true);
}

QString FineTunePresenter::heldOutSummary() const {
    if (!m_before.valid())
        return {};
    const QString base = tr("Held-out perplexity (the end of each book, never trained on; %1, "
                            "T %2, o %3): base model %4")
                             .arg(countText(m_before.tokens, tr("1 token"), tr("%1 tokens")))
                             .arg(m_heldOutWindows.window)
                             .arg(m_heldOutWindows.overlap)
                             .arg(m_before.perplexity(), 0, 'f', 2);
    if (!m_after.valid())
        return base + (running() ? tr(", fine-tuned: measured when training ends.")
                                 : tr(", fine-tuned: not measured."));
    const double change = 100.0 * (m_after.perplexity() / m_before.perplexity() - 1.0);
    return base + tr(" → fine-tuned %1 (%2%3%, %4).")
                      .arg(m_after.perplexity(), 0, 'f', 2)
                      .arg(change < 0 ? QStringLiteral("−") : QStringLiteral("+"))
                      .arg(std::abs(change), 0, 'f', 1)
                      .arg(change < 0 ? tr("better") : tr("no better"));
}

} // namespace baton::ui
