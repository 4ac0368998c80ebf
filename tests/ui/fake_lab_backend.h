// A LabBackend for the lab presenters' tests: it records every request with its
// answers, the test plays the engine by calling the answer methods below (modelLoaded,
// evaluationRow, ...) for a job, and storage requests are answered at once from memory.
#pragma once

#include "lab_backend.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

namespace baton::test {

using ui::LabBackend;

class FakeLabBackend : public LabBackend {
public:
    struct Job {
        QString kind, model, adapter;
        engine::EvaluateRequest evaluate;
        engine::GenerateRequest generate;
        engine::TrainConfig train;
        ui::LabAnswers answers;
    };
    std::map<engine::JobId, Job> jobs;
    std::vector<engine::JobId> cancelled;
    std::vector<storage::EvalResult> results;
    std::vector<storage::Book> stored;
    std::vector<storage::TrainingRun> runList;
    std::vector<std::vector<storage::MetricPoint>> metricCalls;
    std::vector<std::tuple<qint64, std::string, storage::RunStatus>> finished;
    std::vector<storage::MetricPoint> metrics;
    bool failStorage = false;

    engine::JobId loadModel(const ui::ModelSource& source, ui::LabAnswers a) override {
        Job j;
        j.kind = "load";
        j.model = source.folder;
        j.adapter = source.adapter;
        return add(j, std::move(a));
    }
    engine::JobId evaluate(const engine::EvaluateRequest& r, ui::LabAnswers a) override {
        Job j;
        j.kind = "evaluate";
        j.evaluate = r;
        return add(j, std::move(a));
    }
    engine::JobId generate(const engine::GenerateRequest& r, ui::LabAnswers a) override {
        Job j;
        j.kind = "generate";
        j.generate = r;
        return add(j, std::move(a));
    }
    engine::JobId train(const engine::TrainConfig& c, ui::LabAnswers a) override {
        Job j;
        j.kind = "train";
        j.train = c;
        return add(j, std::move(a));
    }
    void cancel(engine::JobId job) override { cancelled.push_back(job); }
    // Read at once, on the test's thread (with a cancelled token when cancelReads is set).
    bool cancelReads = false;
    std::vector<double> readProgress;
    engine::JobId readBooks(const QStringList& paths, Done<const ui::BookFiles&> d,
                            ui::BookProgress p) override {
        engine::CancelToken token;
        if (cancelReads)
            token.cancel();
        d(ui::readBookFiles(paths, token, [&](double f, const QString& file) {
            readProgress.push_back(f);
            if (p)
                p(f, file);
        }));
        return m_next++;
    }
    std::vector<engine::JobId> cancelledReads;
    void cancelBooks(engine::JobId job) override { cancelledReads.push_back(job); }

    void storeEvalResult(const storage::EvalResult& r, Failed f) override {
        if (fail(f))
            return;
        results.push_back(r);
    }
    void evalResults(Done<std::vector<storage::EvalResult>> d, Failed f) override {
        if (!fail(f))
            d(results);
    }
    void books(Done<std::vector<storage::Book>> d, Failed f) override {
        if (fail(f))
            return;
        std::vector<storage::Book> listed = stored;
        for (auto& b : listed)
            b.text.clear();
        d(listed);
    }
    void bookTexts(const std::vector<int64_t>& ids, Done<std::vector<storage::Book>> d,
                   Failed f) override {
        if (fail(f))
            return;
        std::vector<storage::Book> out;
        for (const auto& b : stored)
            if (ids.empty() || std::find(ids.begin(), ids.end(), b.id) != ids.end())
                out.push_back(b);
        d(out);
    }
    void addBooks(const std::vector<storage::Book>& books, Done<bool> d, Failed f) override {
        if (fail(f))
            return;
        for (auto b : books) {
            b.id = int64_t(stored.size()) + 1;
            b.textBytes = int64_t(b.text.size());
            stored.push_back(b);
        }
        d(true);
    }
    void removeBooks(const std::vector<int64_t>& ids, Done<bool> d, Failed f) override {
        if (fail(f))
            return;
        stored.erase(std::remove_if(stored.begin(), stored.end(),
                                    [&](const storage::Book& b) {
                                        return std::find(ids.begin(), ids.end(), b.id) != ids.end();
                                    }),
                     stored.end());
        d(true);
    }
    void runs(Done<std::vector<storage::TrainingRun>> d, Failed f) override {
        if (!fail(f))
            d(runList);
    }
    void createRun(const storage::TrainingRun& run, Done<int64_t> d, Failed f) override {
        if (fail(f))
            return;
        runList.insert(runList.begin(), run);
        runList.front().id = int64_t(runList.size());
        d(runList.front().id);
    }
    void resumeRun(qint64, Done<std::vector<storage::MetricPoint>> d, Failed f) override {
        if (!fail(f))
            d(metrics);
    }
    void addMetrics(const std::vector<storage::MetricPoint>& points, Failed f) override {
        if (!fail(f))
            metricCalls.push_back(points);
    }
    void finishRun(qint64 runId, const std::vector<storage::MetricPoint>& points,
                   const std::string& checkpoint, storage::RunStatus status, const std::string&,
                   Done<bool> d, Failed f) override {
        if (fail(f))
            return;
        metricCalls.push_back(points);
        finished.push_back({runId, checkpoint, status});
        d(true);
    }

    engine::JobId jobOf(const QString& kind, int nth = 0) const {
        for (const auto& [id, j] : jobs)
            if (j.kind == kind && nth-- == 0)
                return id;
        return 0;
    }

    // The engine's answers to job `id`, as the app's backend delivers them.
    void modelLoaded(engine::JobId id, const engine::ModelInfo& info) {
        call(answers(id).loaded, info);
    }
    void evaluationRow(engine::JobId id, const engine::ScoreResult& score, bool withState) {
        engine::EvaluationRow row;
        row.score = score;
        row.withState = withState;
        call(answers(id).row, row);
    }
    void generationProgress(engine::JobId id, const engine::GenerationProgress& g) {
        call(answers(id).text, g);
    }
    void trainingEvent(engine::JobId id, const engine::TrainEvent& e) {
        call(answers(id).event, e);
    }
    void jobProgress(engine::JobId id, double fraction, const QString& message) {
        if (answers(id).progress)
            answers(id).progress(fraction, message);
    }
    void jobFinished(engine::JobId id, bool ok, const engine::Error& error) {
        const std::optional<engine::Error> result =
            ok ? std::nullopt : std::optional<engine::Error>(error);
        call(answers(id).finished, result);
    }

private:
    engine::JobId add(const Job& j, ui::LabAnswers a) {
        const engine::JobId id = m_next++;
        jobs[id] = j;
        jobs[id].answers = std::move(a);
        return id;
    }
    ui::LabAnswers& answers(engine::JobId id) {
        // An answer to a job never asked for is the test's mistake.
        if (!jobs.count(id))
            qFatal("FakeLabBackend: no job %lld", static_cast<long long>(id));
        return jobs[id].answers;
    }
    template <typename F, typename A>
    static void call(const F& f, const A& arg) {
        if (f)
            f(arg);
    }
    bool fail(const Failed& f) {
        if (failStorage && f)
            f(storage::makeStorageError(storage::StorageErrorCode::Io, "injected"));
        return failStorage;
    }
    engine::JobId m_next = 1;
};

} // namespace baton::test
