// TopicsPanel, its second half: fitting a topic model on the books, checking the fit
// on a worker thread (topic_fit_check.h) and registering it, or saying why not.
#include "topics_panel.h"

#include "panel_util.h"

#include <baton/engine/topics.h>

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>

namespace baton::ui {

void TopicsPanel::fit() {
    if (fitting())
        return;
    if (m_folder.isEmpty()) {
        setFitStatus(tr("The story database is not open."));
        return;
    }
    QString name = m_fitName->text().trimmed();
    if (name.isEmpty())
        name = tr("Topics of my books");
    QString file = name.toLower();
    file.replace(QRegularExpression(QStringLiteral("[^a-z0-9]+")), QStringLiteral("-"));
    file = QStringLiteral("%1/%2-%3.json")
               .arg(m_folder, file.left(40),
                    QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-hhmmss")));
    if (!QDir().mkpath(m_folder)) {
        setFitStatus(tr("Cannot create %1.").arg(m_folder));
        return;
    }
    engine::LdaOptions options;
    options.topics = m_fitTopics->value();
    options.iterations = m_fitSweeps->value();
    m_fitLabel = name;
    m_fitPath = file;
    setFitStatus(tr("Reading the books…"));
    m_fitBusy = true; // until the fit is registered or refused
    m_fitReading = true;
    m_fitCancelled = false;
    updateButtons();
    // The books' texts from the database, then the fit on the lab engine.
    m_storage.bookTexts(
        {}, this,
        [this, options, file](std::vector<storage::Book> books) {
            m_fitReading = false;
            if (m_fitCancelled) { // before the fit began
                setFitStatus(tr("Cancelled; nothing was saved."));
                endFit(false);
                return;
            }
            std::vector<std::string> texts;
            for (auto& b : books)
                texts.push_back(std::move(b.text));
            if (texts.empty()) {
                setFitStatus(
                    tr("No books: add some on the Fine-tune page (text, Markdown or EPUB)."));
                endFit(false);
                return;
            }
            m_fitBooks = int(texts.size());
            // The fit on the lab engine; the saved model read back and checked there too.
            const std::string path = file.toStdString();
            m_fitJob = m_lab.run<TopicFitCheck>(
                this,
                [texts = std::move(texts), options,
                 path](engine::JobContext& c) -> engine::Result<TopicFitCheck> {
                    auto model = engine::fitLda(
                        texts, options,
                        [&c](const engine::LdaProgress& p) {
                            c.progress(double(p.iteration) / double(p.iterations),
                                       "sweep " + std::to_string(p.iteration) + " of " +
                                           std::to_string(p.iterations));
                            return !c.cancelled();
                        },
                        c.cancel());
                    if (!model)
                        return model.error();
                    if (auto saved = model->save(path); !saved)
                        return saved.error();
                    auto back = engine::TopicModel::load(path);
                    if (!back)
                        return engine::makeError(back.error().code,
                                                 "the fitted model could not be read back: " +
                                                     back.error().message);
                    return checkTopicModel(*back);
                },
                [this](const TopicFitCheck& check) {
                    m_fitJob = 0;
                    m_fitProgress->setValue(1000);
                    onFitChecked(check);
                },
                [this](const engine::Error& error) { onFitFailed(error); },
                [this](double f, const QString& m) {
                    m_fitProgress->setValue(int(f * 1000));
                    setFitStatus(tr("Fitting %1 on %2: %3")
                                     .arg(m_fitLabel,
                                          countText(m_fitBooks, tr("1 book"), tr("%1 books")), m));
                });
            m_fitProgress->setValue(0);
            setFitStatus(tr("Fitting %1 on %2…")
                             .arg(m_fitLabel, countText(m_fitBooks, tr("1 book"), tr("%1 books"))));
            updateButtons();
        },
        [this](const storage::StorageError& error) {
            m_fitReading = false;
            endFit(false);
            Q_EMIT failed(tr("The books could not be read"), describeStorageError(error));
        });
}

void TopicsPanel::cancelFit() {
    if (m_fitJob)
        m_lab.cancel(m_fitJob);
    else if (m_fitReading)
        m_fitCancelled = true; // said when the books are read; the fit never starts
}

void TopicsPanel::onFitFailed(const engine::Error& error) {
    m_fitJob = 0;
    endFit(false);
    if (error.code == engine::ErrorCode::Cancelled) {
        setFitStatus(tr("Cancelled; nothing was saved."));
    } else {
        setFitStatus(tr("The fit failed."), Tone::Warning);
        Q_EMIT failed(tr("The topic model could not be fitted"), describeEngineError(error));
    }
}

void TopicsPanel::onFitChecked(const TopicFitCheck& c) {
    const QString vocabulary = countText(c.vocabulary, tr("1 word"), tr("%1 words"));
    const QString advice =
        c.suggestedTopics() > 0
            ? tr("Fit at most %1 topics, or add more books.").arg(c.suggestedTopics())
            : tr("The books are too short for topics: add more books.");
    if (c.repeated() > 0) {
        // Copies of the same topics: not worth registering. The file goes too.
        QFile::remove(m_fitPath);
        endFit(false);
        setFitStatus(
            tr("Not kept: %1 of the %2 topics share most of their top words with another "
               "topic (%3), so the model cannot tell them apart. The books give a vocabulary "
               "of %4, and a topic needs about %5. %6")
                .arg(c.repeated())
                .arg(c.topics)
                .arg(c.sharedWords(), vocabulary)
                .arg(TopicFitCheck::kWordsPerTopic)
                .arg(advice),
            Tone::Warning);
        return;
    }
    registerFit(c, c.smallVocabulary()
                       ? tr("Warning: a vocabulary of %1 is small for %2 topics (about %3 words "
                            "each): the topics may be weak. %4")
                             .arg(vocabulary)
                             .arg(c.topics)
                             .arg(TopicFitCheck::kWordsPerTopic)
                             .arg(advice)
                       : QString());
}

void TopicsPanel::registerFit(const TopicFitCheck& check, const QString& warning) {
    // Registered with what the engine reported of the fitted model.
    storage::TopicModelRecord r;
    r.path = m_fitPath.toStdString();
    r.name = m_fitLabel.toStdString();
    r.topics = check.topics;
    r.vocabularySize = check.vocabulary;
    r.summary = tr("Fitted in the app on %1, %2 sweeps; a vocabulary of %3.")
                    .arg(countText(m_fitBooks, tr("1 book"), tr("%1 books")))
                    .arg(m_fitSweeps->value())
                    .arg(countText(check.vocabulary, tr("1 word"), tr("%1 words")))
                    .toStdString();
    m_storage.registerTopicModel(
        r, this,
        [this, warning](int64_t) {
            const QString ready = tr("%1 is ready (%2).").arg(m_fitLabel, m_fitPath);
            if (warning.isEmpty())
                setFitStatus(ready);
            else
                setFitStatus(ready + QLatin1Char(' ') + warning, Tone::Warning);
            m_pendingSelect = m_fitPath;
            refresh();
            Q_EMIT fitted(m_fitPath);
            endFit(true);
        },
        [this](const storage::StorageError& error) {
            endFit(false);
            Q_EMIT failed(tr("The topic model could not be registered"),
                          describeStorageError(error));
        });
}

void TopicsPanel::endFit(bool kept) {
    m_fitBusy = false;
    updateButtons();
    Q_EMIT fitFinished(kept);
}

void TopicsPanel::setFitStatus(const QString& text, Tone tone) {
    m_fitStatus->setText(text);
    QPalette p = palette();
    if (tone == Tone::Warning)
        p.setColor(QPalette::WindowText, QColor(0xa0, 0x3a, 0x00));
    m_fitStatus->setPalette(p);
}

} // namespace baton::ui
