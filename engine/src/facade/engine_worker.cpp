#include "engine_worker.h"

#include <QFileInfo>

#include <exception>
#include <limits>

namespace baton::engine {

namespace {

constexpr qint64 kProgressIntervalMs = 50;

Error noModel() {
    return Error{ErrorCode::InvalidArgument, "no model is loaded"};
}

// Where each token ends in the text it was encoded from (bytes, at most textBytes).
std::vector<int64_t> tokenByteEnds(const Tokenizer& tokenizer, const std::vector<int32_t>& ids,
                                   size_t textBytes) {
    std::vector<int64_t> ends;
    ends.reserve(ids.size());
    int64_t end = 0;
    for (int32_t id : ids) {
        end += int64_t(tokenizer.tokenBytes(id).size());
        ends.push_back(std::min<int64_t>(end, int64_t(textBytes)));
    }
    return ends;
}

} // namespace

EngineWorker::ProgressStream::ProgressStream(EngineWorker& worker, JobId job)
    : m_worker(worker)
    , m_job(job) {
    m_timer.start();
    m_clock.start();
}

bool EngineWorker::ProgressStream::onEvent(const GenerationEvent& e) {
    m_pending.text += e.text;
    m_last = e;
    if (e.token >= 0 && m_worker.due(m_timer, m_first))
        flush();
    return true; // the generator checks the cancel token itself (reason Cancelled)
}

void EngineWorker::ProgressStream::finish() {
    if (!m_pending.text.empty())
        flush();
}

void EngineWorker::ProgressStream::flush() {
    m_pending.generated = m_last.generated;
    m_pending.streamLength = m_last.streamLength;
    m_pending.windowFill = m_last.windowFill;
    m_pending.windowIndex = m_last.windowIndex;
    const double s = double(m_clock.nsecsElapsed()) / 1e9;
    m_pending.tokensPerSecond = s > 0 ? double(m_last.generated) / s : 0.0;
    Q_EMIT m_worker.generationProgress(m_job, m_pending);
    m_pending.text.clear();
}

bool EngineWorker::begin(JobId job, const CancelToken& cancel) {
    Q_EMIT jobStarted(job);
    if (cancel.cancelled()) {
        fail(job, Error{ErrorCode::Cancelled, "cancelled before it started"});
        return false;
    }
    return true;
}

bool EngineWorker::beginWithModel(JobId job, const CancelToken& cancel) {
    if (!begin(job, cancel))
        return false;
    if (!m_model) {
        fail(job, noModel());
        return false;
    }
    return true;
}

bool EngineWorker::due(QElapsedTimer& timer, bool& first) {
    if (first || timer.elapsed() >= kProgressIntervalMs) {
        first = false;
        timer.restart();
        return true;
    }
    return false;
}

void EngineWorker::runLoad(JobId job, const QString& folder, WeightFormat weights,
                           const QString& device, const CancelToken& cancel) {
    if (!begin(job, cancel))
        return;
    QElapsedTimer timer;
    timer.start();
    bool first = true;
    LoadOptions options;
    options.weights = weights;
    options.device = device.toStdString();
    options.cancel = cancel;
    options.progress = [&](double fraction) {
        if (due(timer, first) || fraction >= 1.0)
            Q_EMIT jobProgress(job, fraction,
                               QStringLiteral("loading %1").arg(QFileInfo(folder).fileName()));
        return !cancel.cancelled();
    };
    auto model = Model::load(folder.toStdString(), options);
    if (!model) {
        fail(job, model.error());
        return;
    }
    m_model = *model;
    m_live.reset();
    m_liveState.clear();
    Q_EMIT modelLoaded(job, m_model->info());
    succeed(job);
}

Result<std::unique_ptr<Generator>> EngineWorker::generatorFor(const GenerateRequest& request,
                                                              const CancelToken& cancel) {
    const WindowSettings windows = resolveWindows(m_model->info(), request.windows);
    if (m_live && !request.state.empty() && request.state == m_liveState &&
        request.useState == m_liveUsesState && m_live->windows().window == windows.window &&
        m_live->windows().overlap == windows.overlap) {
        // Continuing exactly where the last generation stopped: nothing to re-encode.
        auto gen = std::move(m_live);
        m_liveState.clear();
        return gen;
    }
    m_live.reset();
    m_liveState.clear();
    std::unique_ptr<Generator> gen;
    if (!request.state.empty()) {
        if (!request.useState)
            return makeError(ErrorCode::InvalidArgument,
                             "a saved state cannot be continued with the state switched off");
        auto imported = Generator::importState(m_model, request.state, request.windows, cancel);
        if (!imported)
            return imported.error();
        gen = std::move(*imported);
    } else {
        auto created = Generator::create(m_model, request.windows, request.useState);
        if (!created)
            return created.error();
        gen = std::move(*created);
        const ModelConfig& config = m_model->config();
        const int bos = startOfTextToken(config);
        if (request.startOfText && !request.text.empty() && bos >= 0)
            if (auto r = gen->append({bos}, cancel); !r)
                return r.error();
    }
    return gen;
}

void EngineWorker::runGenerate(JobId job, const GenerateRequest& request,
                               const CancelToken& cancel) {
    if (!beginWithModel(job, cancel))
        return;
    auto created = generatorFor(request, cancel);
    if (!created) {
        fail(job, created.error());
        return;
    }
    std::unique_ptr<Generator> gen = std::move(*created);
    if (!request.text.empty())
        if (auto r = gen->appendText(request.text, cancel); !r) {
            fail(job, r.error());
            return;
        }
    StateChunker chunker(*gen, m_model->tokenizer(), request.chunkTokens);
    ProgressStream stream(*this, job);
    auto onToken = [&](const GenerationEvent& e) {
        stream.onEvent(e);
        if (auto chunk = chunker.onEvent(e))
            Q_EMIT generationChunk(job, *chunk);
        return true; // the generator checks the cancel token itself (reason Cancelled)
    };
    auto result = gen->generate(request.sampling, onToken, cancel);
    stream.finish();
    if (auto chunk = chunker.finish())
        Q_EMIT generationChunk(job, *chunk);
    if (!result) {
        fail(job, result.error());
        return;
    }
    GenerationDone done;
    done.result = std::move(*result);
    if (auto blob = gen->exportState(); blob.ok())
        done.state = std::move(*blob);
    m_liveState = done.state;
    m_liveUsesState = request.useState;
    m_live = std::move(gen);
    Q_EMIT generationDone(job, done);
    succeed(job);
}

void EngineWorker::runTask(JobId job, const GenerationTask& task, const CancelToken& cancel) {
    if (!beginWithModel(job, cancel))
        return;
    // The task may continue differently from the live generator's state.
    m_live.reset();
    m_liveState.clear();
    ProgressStream stream(*this, job);
    auto result = task(
        m_model, [&](const GenerationEvent& e) { return stream.onEvent(e); }, cancel);
    stream.finish();
    if (!result) {
        fail(job, result.error());
        return;
    }
    GenerationDone done;
    done.result = std::move(*result);
    Q_EMIT generationDone(job, done);
    succeed(job);
}

void EngineWorker::runEvaluate(JobId job, const EvaluateRequest& request,
                               const CancelToken& cancel) {
    if (!beginWithModel(job, cancel))
        return;
    std::vector<std::pair<WindowSettings, bool>> runs;
    for (const auto& w : request.settings) {
        runs.push_back({w, true});
        if (request.alsoWithoutState && m_model->recurrent())
            runs.push_back({w, false});
    }
    QElapsedTimer timer;
    timer.start();
    bool first = true;
    for (size_t i = 0; i < runs.size(); ++i) {
        ScoreOptions o;
        o.windows = runs[i].first;
        o.state = runs[i].second ? StateSource::On : StateSource::Off;
        o.keepPerToken = request.keepPerToken;
        o.cancel = cancel;
        o.progress = [&](int64_t done, int64_t total) {
            if (due(timer, first) || done == total) {
                const double f = (double(i) + (total > 0 ? double(done) / double(total) : 1.0)) /
                                 double(runs.size());
                Q_EMIT jobProgress(job, f,
                                   QStringLiteral("setting %1 of %2").arg(i + 1).arg(runs.size()));
            }
            return !cancel.cancelled();
        };
        auto r = scoreText(*m_model, request.text, o);
        if (!r) {
            fail(job, r.error());
            return;
        }
        Q_EMIT evaluationRow(job, *r, runs[i].second);
        if (request.keepPerToken) {
            const auto tokenizer = m_model->tokenizer();
            const std::vector<int32_t> ids = tokenizer->encode(request.text);
            TokenLosses losses;
            losses.windows = r->windows;
            losses.withState = runs[i].second;
            losses.byteEnd = tokenByteEnds(*tokenizer, ids, request.text.size());
            losses.nll.assign(ids.size(), std::numeric_limits<float>::quiet_NaN());
            for (const TokenScore& t : r->perToken)
                if (t.index >= 0 && t.index < int64_t(ids.size()))
                    losses.nll[size_t(t.index)] = -t.logprob;
            Q_EMIT tokenLosses(job, std::move(losses));
        }
    }
    succeed(job);
}

void EngineWorker::runTrain(JobId job, const TrainConfig& config, const CancelToken& cancel) {
    if (!begin(job, cancel))
        return;
    auto r = train(
        config,
        [&](const TrainEvent& e) {
            Q_EMIT trainingEvent(job, e);
            return true;
        },
        cancel);
    if (!r) {
        fail(job, r.error());
        return;
    }
    if (r->cancelled) {
        fail(job,
             Error{ErrorCode::Cancelled, "training cancelled; the last checkpoint can be resumed"});
        return;
    }
    succeed(job);
}

void EngineWorker::runTopics(JobId job, const TopicsRequest& request, const CancelToken& cancel) {
    if (!begin(job, cancel))
        return;
    QElapsedTimer timer;
    timer.start();
    bool first = true;
    auto model = fitLda(
        request.texts, request.options,
        [&](const LdaProgress& p) {
            if (due(timer, first) || p.iteration == p.iterations)
                Q_EMIT jobProgress(
                    job, double(p.iteration) / double(p.iterations),
                    QStringLiteral("sweep %1 of %2").arg(p.iteration).arg(p.iterations));
            return !cancel.cancelled();
        },
        cancel);
    if (!model) {
        fail(job, model.error());
        return;
    }
    if (auto r = model->save(request.outPath); !r) {
        fail(job, r.error());
        return;
    }
    Q_EMIT topicsFitted(job, QString::fromStdString(request.outPath), model->topics(),
                        model->vocabularySize());
    succeed(job);
}

void EngineWorker::runInspect(JobId job, const TopicsInspectRequest& request,
                              const CancelToken& cancel) {
    if (!beginWithModel(job, cancel))
        return;
    auto topics = TopicModel::load(request.topicModelPath);
    if (!topics) {
        fail(job, topics.error());
        return;
    }
    const WindowSettings w = resolveWindows(m_model->info(), request.windows);
    if (auto ok = validateWindows(w, m_model->config().nPositions); !ok) {
        fail(job, ok.error());
        return;
    }
    const auto tokenizer = m_model->tokenizer();
    const std::vector<int32_t> ids = tokenizer->encode(request.text);
    const std::vector<int64_t> byteEnd = tokenByteEnds(*tokenizer, ids, request.text.size());
    TopicsInspection out;
    out.topics = topics->topics();
    for (int t = 0; t < out.topics; ++t) {
        std::vector<std::string> words;
        for (const auto& [word, p] : topics->topWords(t, request.topWords))
            words.push_back(word);
        out.topWords.push_back(std::move(words));
    }
    out.recurrent = m_model->recurrent();
    QElapsedTimer timer;
    timer.start();
    bool first = true;
    const auto spans = planWindows(int64_t(ids.size()), w);
    // Topic distributions: about half of the work; the states the rest.
    const double topicShare = out.recurrent ? 0.5 : 0.9;
    for (const WindowSpan& span : spans) {
        if (cancel.cancelled()) {
            fail(job, Error{ErrorCode::Cancelled, "the topics view was cancelled"});
            return;
        }
        WindowTopics wt;
        wt.window = span.index;
        wt.firstToken = span.start;
        wt.firstByte = span.start > 0 ? byteEnd[size_t(span.start - 1)] : 0;
        const std::vector<int32_t> window(ids.begin() + span.start,
                                          ids.begin() + span.start + span.length);
        wt.theta = topics->infer(tokenizer->decode(window), request.inferIterations).theta;
        out.windows.push_back(std::move(wt));
        if (due(timer, first))
            Q_EMIT jobProgress(
                job, topicShare * double(span.index + 1) / double(spans.size()),
                QStringLiteral("topics of window %1 of %2").arg(span.index + 1).arg(spans.size()));
    }
    if (out.recurrent) {
        auto readings = readStates(
            *m_model, ids, w, request.stateTokens, cancel, [&](int64_t done, int64_t total) {
                if (due(timer, first))
                    Q_EMIT jobProgress(
                        job, topicShare + (1 - topicShare) * double(done) / double(total),
                        QStringLiteral("state of window %1 of %2").arg(done).arg(total));
                return !cancel.cancelled();
            });
        if (!readings) {
            fail(job, readings.error());
            return;
        }
        for (const StateReading& r : *readings) {
            if (r.window < 0 || r.window >= int64_t(out.windows.size()))
                continue;
            WindowTopics& wt = out.windows[size_t(r.window)];
            for (size_t i = 0; i < r.ids.size(); ++i) {
                wt.stateTokens.push_back(tokenizer->decode({r.ids[i]}));
                wt.stateProbs.push_back(r.probs[i]);
            }
        }
    }
    const int64_t split = request.continuationByte;
    if (split > 0 && split < int64_t(request.text.size())) {
        // The context: the last T tokens that end before the continuation.
        size_t n = 0;
        while (n < byteEnd.size() && byteEnd[n] <= split)
            ++n;
        const size_t from = n > size_t(w.window) ? n - size_t(w.window) : 0;
        const std::vector<int32_t> context(ids.begin() + int64_t(from), ids.begin() + int64_t(n));
        out.context = topics->infer(tokenizer->decode(context), request.inferIterations).theta;
        out.continuation = topics
                               ->infer(std::string_view(request.text).substr(size_t(split)),
                                       request.inferIterations)
                               .theta;
        out.jsdBits = jensenShannonBits(out.context, out.continuation);
    }
    Q_EMIT jobProgress(job, 1.0, QStringLiteral("done"));
    Q_EMIT topicsInspected(job, std::move(out));
    succeed(job);
}

void EngineWorker::runProbe(JobId job, const std::vector<std::string>& texts, ProbeOptions options,
                            const CancelToken& cancel) {
    if (!beginWithModel(job, cancel))
        return;
    QElapsedTimer timer;
    timer.start();
    bool first = true;
    options.cancel = cancel;
    options.progress = [&](int64_t done, int64_t total) {
        if (due(timer, first) || done == total)
            Q_EMIT jobProgress(job, total > 0 ? double(done) / double(total) : 1.0,
                               QStringLiteral("episode %1 of %2").arg(done).arg(total));
        return !cancel.cancelled();
    };
    auto result = engine::runProbe(*m_model, texts, options);
    if (!result) {
        fail(job, result.error());
        return;
    }
    Q_EMIT probed(job, std::move(*result));
    succeed(job);
}

} // namespace baton::engine
