// Books (title, source path, checksum, text) and named corpora: ordered lists of books.
#pragma once

#include "baton/storage/error.h"
#include "baton/storage/records.h"

#include <vector>

namespace baton::storage {

class Connection;

class BookStore {
public:
    explicit BookStore(Connection& connection)
        : m_db(connection) {}

    Result<int64_t> add(const Book& book);
    Result<Book> get(int64_t id);     // with its text
    Result<std::vector<Book>> list(); // without texts, by title
    // Refused (Constraint) while a corpus holds the book.
    Result<void> remove(int64_t id);

    Result<int64_t> createCorpus(const std::string& name, const std::vector<int64_t>& bookIds);
    Result<Corpus> corpus(int64_t id);
    Result<std::vector<Corpus>> corpora();
    Result<void> setCorpusBooks(int64_t corpusId, const std::vector<int64_t>& bookIds);
    Result<void> removeCorpus(int64_t id);

private:
    Connection& m_db;
};

} // namespace baton::storage
