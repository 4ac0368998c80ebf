#include <baton/storage/book_store.h>

#include "connection.h"
#include "statement.h"
#include "store_util.h"
#include "transaction.h"

namespace baton::storage {

namespace {

void writeCorpusBooks(Connection& db, int64_t corpusId, const std::vector<int64_t>& bookIds) {
    db.prepare("DELETE FROM corpus_books WHERE corpus_id = ?1").bind(1, corpusId).run();
    Statement insert =
        db.prepare("INSERT INTO corpus_books (corpus_id, book_id, position) VALUES (?1, ?2, ?3)");
    for (size_t i = 0; i < bookIds.size(); ++i) {
        insert.bind(1, corpusId).bind(2, bookIds[i]).bind(3, static_cast<int64_t>(i));
        insert.run();
    }
}

} // namespace

Result<int64_t> BookStore::add(const Book& book) {
    return guard<int64_t>([&]() -> Result<int64_t> {
        Transaction t(m_db);
        m_db.prepare("INSERT INTO books (title, source_path, checksum, text_bytes, created_at) "
                     "VALUES (?1, ?2, ?3, ?4, ?5)")
            .bind(1, book.title)
            .bind(2, book.sourcePath)
            .bind(3, book.checksum)
            .bind(4, static_cast<int64_t>(book.text.size()))
            .bind(5, nowMs())
            .run();
        const int64_t id = m_db.lastInsertId();
        m_db.prepare("INSERT INTO book_texts (book_id, text) VALUES (?1, ?2)")
            .bind(1, id)
            .bind(2, book.text)
            .run();
        t.commit();
        return id;
    });
}

Result<Book> BookStore::get(int64_t id) {
    return guard<Book>([&]() -> Result<Book> {
        Statement s = m_db.prepare(
            "SELECT b.id, b.title, b.source_path, b.checksum, b.text_bytes, b.created_at, t.text "
            "FROM books b JOIN book_texts t ON t.book_id = b.id WHERE b.id = ?1");
        s.bind(1, id);
        if (!s.step())
            throwNotFound("book", id);
        return Book{s.columnInt(0),  s.columnText(1), s.columnText(2), s.columnText(3),
                    s.columnText(6), s.columnInt(4),  s.columnInt(5)};
    });
}

Result<std::vector<Book>> BookStore::list() {
    return guard<std::vector<Book>>([&]() -> Result<std::vector<Book>> {
        Statement s = m_db.prepare("SELECT id, title, source_path, checksum, text_bytes, "
                                   "created_at FROM books ORDER BY title, id");
        std::vector<Book> out;
        while (s.step())
            out.push_back(Book{s.columnInt(0),
                               s.columnText(1),
                               s.columnText(2),
                               s.columnText(3),
                               {},
                               s.columnInt(4),
                               s.columnInt(5)});
        return out;
    });
}

Result<void> BookStore::remove(int64_t id) {
    return guard<void>([&]() -> Result<void> {
        m_db.prepare("DELETE FROM books WHERE id = ?1").bind(1, id).run();
        if (m_db.changes() == 0)
            throwNotFound("book", id);
        return {};
    });
}

Result<int64_t> BookStore::createCorpus(const std::string& name,
                                        const std::vector<int64_t>& bookIds) {
    return guard<int64_t>([&]() -> Result<int64_t> {
        Transaction t(m_db);
        m_db.prepare("INSERT INTO corpora (name, created_at) VALUES (?1, ?2)")
            .bind(1, name)
            .bind(2, nowMs())
            .run();
        const int64_t id = m_db.lastInsertId();
        writeCorpusBooks(m_db, id, bookIds);
        t.commit();
        return id;
    });
}

Result<Corpus> BookStore::corpus(int64_t id) {
    return guard<Corpus>([&]() -> Result<Corpus> {
        Statement s = m_db.prepare("SELECT id, name, created_at FROM corpora WHERE id = ?1");
        s.bind(1, id);
        if (!s.step())
            throwNotFound("corpus", id);
        Corpus c{s.columnInt(0), s.columnText(1), {}, s.columnInt(2)};
        Statement b =
            m_db.prepare("SELECT book_id FROM corpus_books WHERE corpus_id = ?1 ORDER BY position");
        b.bind(1, id);
        while (b.step())
            c.bookIds.push_back(b.columnInt(0));
        return c;
    });
}

Result<std::vector<Corpus>> BookStore::corpora() {
    return guard<std::vector<Corpus>>([&]() -> Result<std::vector<Corpus>> {
        std::vector<int64_t> ids;
        Statement s = m_db.prepare("SELECT id FROM corpora ORDER BY name");
        while (s.step())
            ids.push_back(s.columnInt(0));
        std::vector<Corpus> out;
        for (int64_t id : ids) {
            auto c = corpus(id);
            if (!c)
                return c.error();
            out.push_back(std::move(*c));
        }
        return out;
    });
}

Result<void> BookStore::setCorpusBooks(int64_t corpusId, const std::vector<int64_t>& bookIds) {
    return guard<void>([&]() -> Result<void> {
        Transaction t(m_db);
        Statement s = m_db.prepare("SELECT 1 FROM corpora WHERE id = ?1");
        s.bind(1, corpusId);
        if (!s.step())
            throwNotFound("corpus", corpusId);
        writeCorpusBooks(m_db, corpusId, bookIds);
        t.commit();
        return {};
    });
}

Result<void> BookStore::removeCorpus(int64_t id) {
    return guard<void>([&]() -> Result<void> {
        m_db.prepare("DELETE FROM corpora WHERE id = ?1").bind(1, id).run();
        if (m_db.changes() == 0)
            throwNotFound("corpus", id);
        return {};
    });
}

} // namespace baton::storage
