#include <baton/storage/recall_store.h>

#include "connection.h"
#include "recall_index.h"
#include "statement.h"
#include "store_util.h"
#include "transaction.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace baton::storage {

namespace {

bool spaceByte(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

bool closer(char c) {
    return c == '"' || c == '\'' || c == ')' || c == ']';
}

// Where the sentence or line that starts at `from` ends: after a line break, or after
// . ! ? (and closing quotes or brackets) followed by white space, with that white space.
size_t unitEnd(std::string_view text, size_t from) {
    for (size_t i = from; i < text.size(); ++i) {
        if (text[i] == '\n')
            return i + 1;
        if (text[i] == '.' || text[i] == '!' || text[i] == '?') {
            size_t j = i + 1;
            while (j < text.size() &&
                   (closer(text[j]) || static_cast<unsigned char>(text[j]) >= 0x80))
                ++j; // closers, and the UTF-8 of ’ ” »
            if (j < text.size() && !spaceByte(text[j]))
                continue;
            while (j < text.size() && (text[j] == ' ' || text[j] == '\t'))
                ++j;
            return j;
        }
    }
    return text.size();
}

// A cut of text[from, ...) at most `most` bytes long: after its last space, else at a
// UTF-8 character boundary.
size_t cutAt(std::string_view text, size_t from, size_t most) {
    size_t end = std::min(text.size(), from + most);
    if (end == text.size())
        return end;
    for (size_t i = end; i > from + 1; --i)
        if (text[i - 1] == ' ')
            return i;
    while (end > from + 1 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
        --end;
    return end;
}

bool blank(std::string_view s) {
    return std::all_of(s.begin(), s.end(), spaceByte);
}

// The FTS5 token of a story's chunks in the index's `story` column.
std::string storyToken(int64_t storyId) {
    return "s" + std::to_string(storyId);
}

// A term as a quoted FTS5 string (quotes doubled, NULs dropped), so nothing typed in a
// story is read as query syntax; "" for a term without a letter or digit.
std::string phrase(const std::string& term) {
    const bool word = std::any_of(term.begin(), term.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || static_cast<unsigned char>(c) >= 0x80;
    });
    if (!word)
        return {};
    std::string out = "\"";
    for (char c : term) {
        if (c == '"')
            out += '"';
        if (c != '\0')
            out += c;
    }
    return out + '"';
}

// The words highlight() marked between \x01 and \x02, once each (ignoring ASCII case).
std::vector<std::string> markedWords(const std::string& marked) {
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (size_t at = marked.find('\x01'); at != std::string::npos; at = marked.find('\x01', at)) {
        const size_t end = marked.find('\x02', at);
        if (end == std::string::npos)
            break;
        std::string word = marked.substr(at + 1, end - at - 1), key = word;
        for (char& c : key)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (seen.insert(key).second)
            out.push_back(std::move(word));
        at = end;
    }
    return out;
}

constexpr int64_t kPendingBatch = 500;

} // namespace

std::vector<ChunkSpan> recallChunks(std::string_view text) {
    std::vector<ChunkSpan> out;
    size_t start = 0;
    while (start < text.size()) {
        // Whole sentences while they fit, never across a blank line.
        size_t end = start;
        while (end < text.size()) {
            const size_t next = unitEnd(text, end);
            if (next - start > kRecallChunkBytes) {
                if (end == start)
                    end = cutAt(text, start, kRecallChunkBytes);
                break;
            }
            end = next;
            if (text[end - 1] == '\n' && end < text.size() &&
                (text[end] == '\n' || text[end] == '\r')) {
                while (end < text.size() && end - start < kRecallChunkBytes &&
                       (text[end] == '\n' || text[end] == '\r'))
                    ++end; // the blank lines end the paragraph and go with it
                break;
            }
        }
        if (!blank(text.substr(start, end - start)))
            out.push_back({start, end});
        start = end;
    }
    return out;
}

void indexPassage(Connection& db, int64_t passageId) {
    db.prepare("DELETE FROM passage_chunks WHERE passage_id = ?1").bind(1, passageId).run();
    Statement read = db.prepare("SELECT text, story_id FROM passages WHERE id = ?1");
    read.bind(1, passageId);
    if (read.step()) {
        const std::string text = read.columnText(0);
        const std::string story = storyToken(read.columnInt(1));
        Statement insert = db.prepare("INSERT INTO passage_chunks (passage_id, start_byte, "
                                      "end_byte, text, story) VALUES (?1, ?2, ?3, ?4, ?5)");
        for (const ChunkSpan& c : recallChunks(text)) {
            insert.bind(1, passageId)
                .bind(2, static_cast<int64_t>(c.start))
                .bind(3, static_cast<int64_t>(c.end))
                .bind(4, std::string_view(text).substr(c.start, c.end - c.start))
                .bind(5, story)
                .run();
            insert.reset();
        }
    }
    db.prepare("DELETE FROM recall_pending WHERE passage_id = ?1").bind(1, passageId).run();
}

Result<std::vector<RecallHit>>
RecallStore::search(int64_t storyId, const std::vector<std::string>& terms, int limit) {
    return guard<std::vector<RecallHit>>([&]() -> Result<std::vector<RecallHit>> {
        if (limit <= 0)
            return std::vector<RecallHit>{};
        const std::string story = storyToken(storyId);
        auto run = [&] {
            // The terms, rarest first (in the whole index), while the chunks they match
            // add up to at most kRecallMaxMatches: BM25 scores every chunk a term matches.
            std::vector<std::pair<int64_t, std::string>> counted;
            std::set<std::string> seen;
            Statement count = m_db.prepare("SELECT count(*) FROM (SELECT 1 FROM recall_index "
                                           "WHERE recall_index MATCH ?1 LIMIT ?2)");
            for (const auto& t : terms) {
                const std::string p = phrase(t);
                if (p.empty() || !seen.insert(p).second)
                    continue;
                count.bind(1, "text:" + p).bind(2, kRecallMaxMatches + 1);
                count.step();
                const int64_t n = count.columnInt(0);
                count.reset();
                if (n > 0 && n <= kRecallMaxMatches)
                    counted.emplace_back(n, p);
            }
            std::stable_sort(counted.begin(), counted.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
            std::string any;
            int64_t matches = 0;
            for (const auto& [n, p] : counted) {
                if (matches + n > kRecallMaxMatches)
                    break;
                matches += n;
                any += (any.empty() ? "" : " OR ") + p;
            }
            std::vector<RecallHit> out;
            if (any.empty())
                return out;
            // Ranked over every story (FTS5 alone), the story's chunks kept; only when
            // other stories crowd them out is the story's own token ANDed in (an
            // intersection with every chunk of the story: about three times the cost).
            Statement where = m_db.prepare("SELECT passage_id, start_byte, end_byte, story FROM "
                                           "passage_chunks WHERE id = ?1");
            auto ranked = [&](const std::string& match, int64_t rows) {
                out.clear();
                Statement s = m_db.prepare(
                    "SELECT rowid, -bm25(recall_index, 1.0, 0.0), highlight(recall_index, 0, "
                    "char(1), char(2)) FROM recall_index WHERE recall_index MATCH ?1 ORDER BY "
                    "bm25(recall_index, 1.0, 0.0) LIMIT ?2");
                s.bind(1, match).bind(2, rows);
                int64_t seenRows = 0;
                while (s.step() && static_cast<int>(out.size()) < limit) {
                    ++seenRows;
                    RecallHit h{s.columnInt(0), 0, 0, 0, s.columnDouble(1), {}};
                    where.bind(1, h.chunkId);
                    if (where.step() && where.columnText(3) == story) {
                        h.passageId = where.columnInt(0);
                        h.start = where.columnInt(1);
                        h.end = where.columnInt(2);
                        h.matched = markedWords(s.columnText(2));
                        out.push_back(std::move(h));
                    }
                    where.reset();
                }
                return seenRows;
            };
            const int64_t wide = 2 * static_cast<int64_t>(limit);
            if (ranked("text:(" + any + ")", wide) == wide && static_cast<int>(out.size()) < limit)
                ranked("story:" + story + " AND text:(" + any + ")", limit);
            return out;
        };
        try {
            return run();
        } catch (const SqliteException& e) {
            if (e.error().code != StorageErrorCode::Corrupt || m_db.readOnly())
                throw;
        }
        // A damaged index is never trusted: rebuilt from the chunks, then asked again.
        m_db.exec("INSERT INTO recall_index (recall_index) VALUES ('rebuild')");
        return run();
    });
}

Result<int64_t> RecallStore::pending() {
    return guard<int64_t>(
        [&]() -> Result<int64_t> { return m_db.queryInt("SELECT count(*) FROM recall_pending"); });
}

Result<int64_t> RecallStore::indexPending(const std::function<bool(int64_t, int64_t)>& progress) {
    return guard<int64_t>([&]() -> Result<int64_t> {
        const int64_t total = m_db.queryInt("SELECT count(*) FROM recall_pending");
        int64_t done = 0;
        while (done < total) {
            std::vector<int64_t> batch;
            Transaction t(m_db);
            {
                Statement s = m_db.prepare(
                    "SELECT passage_id FROM recall_pending ORDER BY passage_id LIMIT ?1");
                s.bind(1, kPendingBatch);
                while (s.step())
                    batch.push_back(s.columnInt(0));
            }
            if (batch.empty())
                break; // another process indexed the rest
            for (int64_t id : batch)
                indexPassage(m_db, id);
            t.commit();
            done += static_cast<int64_t>(batch.size());
            if (progress && !progress(std::min(done, total), total))
                break;
        }
        return done;
    });
}

Result<bool> RecallStore::check() {
    return guard<bool>([&]() -> Result<bool> {
        try {
            m_db.exec(
                "INSERT INTO recall_index (recall_index, rank) VALUES ('integrity-check', 1)");
        } catch (const SqliteException& e) {
            if (e.error().code == StorageErrorCode::Corrupt)
                return false;
            throw;
        }
        return true;
    });
}

Result<void> RecallStore::rebuild() {
    return guard<void>([&]() -> Result<void> {
        Transaction t(m_db);
        m_db.exec("INSERT INTO recall_index (recall_index) VALUES ('rebuild')");
        t.commit();
        return {};
    });
}

} // namespace baton::storage
