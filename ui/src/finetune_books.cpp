// The Fine-tune page's books: read off the GUI thread with progress and Cancel, then
// stored; removed. (FineTunePresenter's book list, apart from its runs.)
#include "finetune_presenter.h"

namespace baton::ui {

void FineTunePresenter::importBooks(const QStringList& files) {
    if (m_importing || files.isEmpty())
        return;
    m_importing = true;
    Q_EMIT progress(0);
    Q_EMIT stateChanged();
    const engine::JobId job = m_backend.readBooks(
        files,
        [this](const BookFiles& read) {
            m_importing = false;
            m_importJob = 0;
            Q_EMIT stateChanged();
            onBooksRead(read);
        },
        [this](double fraction, const QString& file) {
            Q_EMIT progress(fraction);
            if (!file.isEmpty())
                Q_EMIT status(tr("Reading %1…").arg(file));
        });
    if (m_importing) // not answered at once
        m_importJob = job;
}

void FineTunePresenter::onBooksRead(const BookFiles& read) {
    if (read.cancelled) {
        Q_EMIT status(tr("Adding books was cancelled: none of them was added."));
        return;
    }
    if (!read.refused.isEmpty()) {
        ErrorText e;
        e.message = tr("Only UTF-8 text, Markdown, DRM-free EPUB files or library shards can "
                       "be used as books. Nothing was changed for these files:");
        e.detail = read.refused.join(QLatin1Char('\n'));
        Q_EMIT failed(tr("Some files were not added"), e);
    }
    if (read.books.empty())
        return;
    Q_EMIT status(tr("Saving %n book(s)…", nullptr, int(read.books.size())));
    m_backend.addBooks(
        read.books,
        [this, n = int(read.books.size())](bool) {
            Q_EMIT status(tr("%n book(s) added.", nullptr, n));
            refresh();
        },
        reportAs(tr("The books could not be saved")));
}

void FineTunePresenter::removeBooks(const std::vector<int64_t>& ids) {
    m_backend.removeBooks(
        ids, [this](bool) { refresh(); }, reportAs(tr("The book could not be removed")));
}

} // namespace baton::ui
