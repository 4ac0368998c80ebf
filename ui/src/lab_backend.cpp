#include "lab_backend.h"

namespace baton::ui {

FacadeLabBackend::FacadeLabBackend(engine::ModelJobs& lab, engine::ModelJobs& files,
                                   storage::StorageController& storage, QObject* parent)
    : LabBackend(parent)
    , m_lab(lab)
    , m_files(files)
    , m_storage(storage) {}

namespace {

engine::ModelJobs::Failed failedOf(const LabAnswers& a) {
    return [finished = a.finished](const engine::Error& e) {
        if (finished)
            finished(e);
    };
}

std::function<void(bool)> succeededOf(const LabAnswers& a) {
    return [finished = a.finished](bool) {
        if (finished)
            finished(std::nullopt);
    };
}

// A report handler that tolerates an answer the caller left out.
template <typename R>
std::function<void(R)> forward(const std::function<void(const R&)>& to) {
    return [to](R value) {
        if (to)
            to(value);
    };
}

} // namespace

engine::JobId FacadeLabBackend::loadModel(const ModelSource& source, LabAnswers a) {
    return m_lab.load(
        this, source.folder, source.options(),
        [a](const engine::ModelInfo& info) {
            if (a.loaded)
                a.loaded(info);
            succeededOf(a)(true);
        },
        failedOf(a), a.progress);
}

engine::JobId FacadeLabBackend::evaluate(const engine::EvaluateRequest& request, LabAnswers a) {
    return m_lab.stream<bool, engine::EvaluationRow>(
        this,
        [request](engine::JobContext& c,
                  const std::function<void(engine::EvaluationRow)>& row) -> engine::Result<bool> {
            auto model = c.requireModel();
            if (!model)
                return model.error();
            if (auto r = engine::evaluate(**model, request, row, c.cancel(), c.progressReporter());
                !r)
                return r.error();
            return true;
        },
        forward(a.row), succeededOf(a), failedOf(a), a.progress);
}

engine::JobId FacadeLabBackend::generate(const engine::GenerateRequest& request, LabAnswers a) {
    return m_lab.stream<bool, engine::GenerationProgress>(
        this,
        [request](
            engine::JobContext& c,
            const std::function<void(engine::GenerationProgress)>& text) -> engine::Result<bool> {
            auto model = c.requireModel();
            if (!model)
                return model.error();
            engine::GenerationStream stream(c, text);
            auto r = engine::generateFrom(
                *model, request,
                [&stream](const engine::GenerationEvent& e) { return stream.onEvent(e); },
                c.cancel());
            stream.finish();
            if (!r)
                return r.error();
            return true;
        },
        forward(a.text), succeededOf(a), failedOf(a));
}

engine::JobId FacadeLabBackend::train(const engine::TrainConfig& config, LabAnswers a) {
    return m_lab.stream<bool, engine::TrainEvent>(
        this,
        [config](engine::JobContext& c,
                 const std::function<void(engine::TrainEvent)>& event) -> engine::Result<bool> {
            auto r = engine::train(
                config,
                [&event](const engine::TrainEvent& e) {
                    event(e);
                    return true;
                },
                c.cancel());
            if (!r)
                return r.error();
            if (r->cancelled)
                return engine::makeError(engine::ErrorCode::Cancelled,
                                         "training cancelled; the last checkpoint can be resumed");
            return true;
        },
        forward(a.event), succeededOf(a), failedOf(a));
}

void FacadeLabBackend::cancel(engine::JobId job) {
    m_lab.cancel(job);
}

engine::JobId FacadeLabBackend::readBooks(const QStringList& paths, Done<const BookFiles&> done,
                                          BookProgress progress) {
    return m_files.run<BookFiles>(
        this,
        [paths](engine::JobContext& job) -> engine::Result<BookFiles> {
            return readBookFiles(paths, job.cancel(), [&job](double f, const QString& file) {
                job.progress(f, file.toStdString());
            });
        },
        [done](const BookFiles& read) { done(read); }, {},
        [progress](double f, const QString& file) {
            if (progress)
                progress(f, file);
        });
}

void FacadeLabBackend::cancelBooks(engine::JobId job) {
    m_files.cancel(job);
}

void FacadeLabBackend::storeEvalResult(const storage::EvalResult& result, Failed failed) {
    m_storage.addEvalResult(result, this, {}, std::move(failed));
}
void FacadeLabBackend::evalResults(Done<std::vector<storage::EvalResult>> done, Failed failed) {
    m_storage.listEvalResults(this, std::move(done), std::move(failed));
}
void FacadeLabBackend::books(Done<std::vector<storage::Book>> done, Failed failed) {
    m_storage.listBooks(this, std::move(done), std::move(failed));
}
void FacadeLabBackend::bookTexts(const std::vector<int64_t>& ids,
                                 Done<std::vector<storage::Book>> done, Failed failed) {
    m_storage.bookTexts(ids, this, std::move(done), std::move(failed));
}
void FacadeLabBackend::addBooks(const std::vector<storage::Book>& books, Done<bool> done,
                                Failed failed) {
    m_storage.addBooks(books, this, std::move(done), std::move(failed));
}
void FacadeLabBackend::removeBooks(const std::vector<int64_t>& ids, Done<bool> done,
                                   Failed failed) {
    m_storage.removeBooks(ids, this, std::move(done), std::move(failed));
}
void FacadeLabBackend::runs(Done<std::vector<storage::TrainingRun>> done, Failed failed) {
    m_storage.listRuns(this, std::move(done), std::move(failed));
}
void FacadeLabBackend::createRun(const storage::TrainingRun& run, Done<int64_t> done,
                                 Failed failed) {
    m_storage.createRun(run, this, std::move(done), std::move(failed));
}
void FacadeLabBackend::resumeRun(qint64 runId, Done<std::vector<storage::MetricPoint>> done,
                                 Failed failed) {
    m_storage.resumeRun(runId, this, std::move(done), std::move(failed));
}
void FacadeLabBackend::addMetrics(const std::vector<storage::MetricPoint>& points, Failed failed) {
    m_storage.addMetrics(points, this, {}, std::move(failed));
}
void FacadeLabBackend::finishRun(qint64 runId, const std::vector<storage::MetricPoint>& points,
                                 const std::string& checkpoint, storage::RunStatus status,
                                 const std::string& message, Done<bool> done, Failed failed) {
    m_storage.finishRun(runId, points, checkpoint, status, message, this, std::move(done),
                        std::move(failed));
}

} // namespace baton::ui
