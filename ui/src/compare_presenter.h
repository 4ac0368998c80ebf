// Compare overlaps without widgets: evaluates one or two models (a baseline and its
// recurrent twin) on a text over a grid of window sizes and overlaps on the lab
// engine, stores every row in the database's evaluation results, reopens the results
// stored for a text, and continues one prompt under two settings with the same seed.
// ComparePanel shows what it reports; its tests drive it with a fake LabBackend.
#pragma once

#include "error_text.h"
#include "lab_backend.h"

#include <baton/engine/model_info.h>

#include <QHash>
#include <QObject>
#include <QStringList>

#include <array>
#include <vector>

namespace baton::ui {

class ModelCatalog;

struct CompareRequest {
    QStringList models; // one or two model folders
    QString text;       // what to evaluate on
    QString label;      // what it is called (a file name, "the open story")
    QString windows;    // window sizes as typed: numbers separated by commas
    QString overlaps;   // idem
};

struct ContinuationSetting {
    QString model;
    int window = 128;
    int overlap = 0;
};

// One text with stored results (the Stored results list).
struct StoredText {
    QString hash, label;
    int results = 0;
    qint64 newest = 0; // ms since the epoch
};

// "128, 256" -> {128, 256} without repeats; false for anything but numbers.
bool parseNumberList(const QString& text, std::vector<int>& out);

class ComparePresenter : public QObject {
    Q_OBJECT
public:
    ComparePresenter(LabBackend& backend, const ModelCatalog& catalog, QObject* parent = nullptr);

    // False (with a status message) when the request cannot run: bad grid, no valid
    // setting, no model, no text.
    bool evaluate(const CompareRequest& request);
    bool continueBoth(const QString& prompt, const std::array<ContinuationSetting, 2>& settings,
                      int tokens);
    void cancel();
    bool running() const { return !m_jobs.isEmpty(); }

    // Every row measured or reopened; latestRows(): the latest per (model, T, o).
    const std::vector<storage::EvalResult>& rows() const { return m_rows; }
    std::vector<storage::EvalResult> latestRows() const;
    QString textHash() const { return m_textHash; }
    QString modelName(const QString& path) const;

    // Reads the stored results: the texts (storedTextsChanged), or one text's rows.
    void refreshHistory();
    void reopen(const QString& textHash);

    // The seed both continuations use.
    static constexpr uint64_t kContinuationSeed = 1234;

Q_SIGNALS:
    void status(QString text);
    void progress(double fraction);
    void busyChanged(bool busy);
    void rowsChanged();
    void storedTextsChanged(std::vector<baton::ui::StoredText> texts);
    void continuationStarted(int side, QString prompt);
    void continuationText(int side, QString text);
    void finished(bool ok);
    void continuationsFinished();
    void failed(QString what, baton::ui::ErrorText error);

private:
    struct Pending {
        QString model;
        enum Kind { Load, Evaluate, Continue } kind = Load;
        int side = 0; // continuations: 0 = A, 1 = B
    };
    // Asks the backend for a job (ask) with answers for what `p` is; keeps its id while
    // it runs.
    engine::JobId send(const Pending& p, const std::function<engine::JobId(LabAnswers)>& ask);
    void onRow(engine::JobId job, const engine::ScoreResult& row);
    void onFinished(engine::JobId job, const std::optional<engine::Error>& failure);
    LabBackend::Failed reportAs(const QString& what);

    LabBackend& m_backend;
    const ModelCatalog& m_catalog;
    QHash<engine::JobId, Pending> m_jobs;
    QHash<QString, engine::ModelConfig> m_configs; // model path -> its config (when loaded)
    std::vector<storage::EvalResult> m_rows;
    QString m_textLabel, m_textHash;
    int m_evalJobs = 0, m_evalDone = 0;
    bool m_failed = false;
};

} // namespace baton::ui

Q_DECLARE_METATYPE(std::vector<baton::ui::StoredText>)
