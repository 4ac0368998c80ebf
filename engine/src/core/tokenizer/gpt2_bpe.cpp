#include "tokenizer/gpt2_bpe.h"

#include "tokenizer/pretokenizer.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/json.h"
#include "util/utf8.h"

#include <queue>

namespace baton::engine {

namespace {

constexpr size_t kMaxCacheEntries = 200000;
constexpr const char* kEndOfText = "<|endoftext|>";

// GPT-2's reversible map from bytes to printable code points: the printable
// Latin-1 bytes map to themselves, the other 68 to U+0100 onwards in order.
struct ByteMap {
    char32_t toChar[256];
    std::unordered_map<char32_t, unsigned char> toByte;
    ByteMap() {
        int next = 0;
        for (int b = 0; b < 256; ++b) {
            const bool printable =
                (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            toChar[b] = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + next++);
            toByte[toChar[b]] = static_cast<unsigned char>(b);
        }
    }
};

const ByteMap& byteMap() {
    static const ByteMap map;
    return map;
}

// Converts a token string in GPT-2's byte-map alphabet back to raw bytes.
bool unmapToken(std::string_view token, std::string& bytes) {
    const ByteMap& map = byteMap();
    bytes.clear();
    for (size_t pos = 0; pos < token.size();) {
        size_t len;
        const char32_t cp = utf8::decode(token, pos, len);
        const auto it = map.toByte.find(cp);
        if (cp == utf8::kInvalid || it == map.toByte.end())
            return false;
        bytes.push_back(static_cast<char>(it->second));
        pos += len;
    }
    return true;
}

Error invalid(const std::string& what) {
    return makeError(ErrorCode::TokenizerInvalid, "invalid GPT-2 tokenizer: " + what);
}

} // namespace

Result<std::shared_ptr<Gpt2BpeTokenizer>>
Gpt2BpeTokenizer::fromFiles(const std::string& vocabPath, const std::string& mergesPath) {
    auto vocab = files::readAll(vocabPath, size_t(256) << 20);
    if (!vocab)
        return vocab.error();
    auto merges = files::readAll(mergesPath, size_t(256) << 20);
    if (!merges)
        return merges.error();
    return fromData(*vocab, *merges);
}

Result<std::shared_ptr<Gpt2BpeTokenizer>> Gpt2BpeTokenizer::fromData(std::string_view vocabJson,
                                                                     std::string_view mergesText) {
    if (const size_t bad = utf8::firstInvalid(mergesText); bad != std::string_view::npos)
        return makeError(ErrorCode::InvalidUtf8,
                         "merges.txt is not valid UTF-8 (byte " + std::to_string(bad) + ")");
    auto parsed = parseJson(vocabJson, "vocab.json");
    if (!parsed)
        return parsed.error();
    const json::Json& vocab = *parsed;
    if (!vocab.is_object() || vocab.empty())
        return invalid("vocab.json must be a non-empty JSON object of token -> id");

    auto tok = std::shared_ptr<Gpt2BpeTokenizer>(new Gpt2BpeTokenizer());
    std::unordered_map<std::string, int32_t> bytesToId;
    bytesToId.reserve(vocab.size() * 2);
    int64_t maxId = -1;
    for (const auto& [token, value] : vocab.items()) {
        if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
            value.get<int64_t>() >= (int64_t(1) << 24))
            return invalid("the id of token '" + token + "' is not an integer in [0, 2^24)");
        maxId = std::max<int64_t>(maxId, value.get<int64_t>());
    }
    tok->m_idToBytes.assign(static_cast<size_t>(maxId + 1), std::string());
    tok->m_special.assign(static_cast<size_t>(maxId + 1), false);
    std::vector<bool> seen(static_cast<size_t>(maxId + 1), false);
    std::string bytes;
    for (const auto& [token, value] : vocab.items()) {
        const auto id = static_cast<size_t>(value.get<int64_t>());
        if (seen[id])
            return invalid("id " + std::to_string(id) + " is used by two tokens");
        seen[id] = true;
        if (token == kEndOfText) {
            tok->m_special[id] = true;
            tok->m_eosId = static_cast<int>(id);
            continue;
        }
        if (!unmapToken(token, bytes))
            return invalid("token '" + token + "' has characters outside GPT-2's byte alphabet");
        tok->m_idToBytes[id] = bytes;
        bytesToId.emplace(bytes, static_cast<int32_t>(id));
    }
    for (int b = 0; b < 256; ++b) {
        const auto it = bytesToId.find(std::string(1, static_cast<char>(b)));
        if (it == bytesToId.end())
            return invalid("no token for byte " + std::to_string(b));
        tok->m_byteToId[b] = it->second;
    }

    // merges.txt: an optional "#version" line, then "left right" per line, by rank.
    int32_t rank = 0;
    size_t lineNo = 0;
    std::string left, right;
    for (size_t pos = 0; pos < mergesText.size();) {
        size_t eol = mergesText.find('\n', pos);
        if (eol == std::string_view::npos)
            eol = mergesText.size();
        std::string_view line = mergesText.substr(pos, eol - pos);
        pos = eol + 1;
        ++lineNo;
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (line.empty() || (lineNo == 1 && line.rfind("#version", 0) == 0))
            continue;
        const size_t space = line.find(' ');
        if (space == std::string_view::npos || space == 0 || space + 1 >= line.size() ||
            line.find(' ', space + 1) != std::string_view::npos)
            return invalid("merges.txt line " + std::to_string(lineNo) + " is not 'left right'");
        if (!unmapToken(line.substr(0, space), left) || !unmapToken(line.substr(space + 1), right))
            return invalid("merges.txt line " + std::to_string(lineNo) +
                           " has characters outside GPT-2's byte alphabet");
        const auto l = bytesToId.find(left), r = bytesToId.find(right),
                   m = bytesToId.find(left + right);
        if (l == bytesToId.end() || r == bytesToId.end() || m == bytesToId.end())
            return invalid("merges.txt line " + std::to_string(lineNo) +
                           " names a token that vocab.json does not have");
        const uint64_t key = (uint64_t(uint32_t(l->second)) << 32) | uint32_t(r->second);
        tok->m_merges.emplace(key, Merge{rank++, m->second});
    }
    ContentHash h;
    h.update("gpt2-bpe\n");
    h.update(vocabJson);
    h.update("\n--merges--\n");
    h.update(mergesText);
    tok->m_identity = h.hex();
    return tok;
}

void Gpt2BpeTokenizer::bpe(std::string_view piece, std::vector<int32_t>& out) const {
    // Symbols in a doubly linked list; candidate merges in a min-heap ordered by
    // (rank, position), stale entries skipped. Merging the lowest-ranked pair,
    // leftmost first, equals GPT-2's round-by-round reference algorithm.
    const size_t n = piece.size();
    std::vector<int32_t> sym(n);
    std::vector<int> prev(n), next(n);
    for (size_t i = 0; i < n; ++i) {
        sym[i] = m_byteToId[static_cast<unsigned char>(piece[i])];
        prev[i] = static_cast<int>(i) - 1;
        next[i] = (i + 1 < n) ? static_cast<int>(i + 1) : -1;
    }
    struct Candidate {
        int32_t rank;
        int pos;
        int32_t left, right;
        bool operator>(const Candidate& o) const {
            return rank != o.rank ? rank > o.rank : pos > o.pos;
        }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
    auto consider = [&](int i) {
        if (i < 0 || next[i] < 0)
            return;
        const uint64_t key = (uint64_t(uint32_t(sym[i])) << 32) | uint32_t(sym[next[i]]);
        const auto it = m_merges.find(key);
        if (it != m_merges.end())
            heap.push({it->second.rank, i, sym[i], sym[next[i]]});
    };
    for (size_t i = 0; i + 1 < n; ++i)
        consider(static_cast<int>(i));
    while (!heap.empty()) {
        const Candidate c = heap.top();
        heap.pop();
        const int i = c.pos;
        const int j = next[i];
        if (sym[i] != c.left || j < 0 || sym[j] != c.right)
            continue; // stale
        const uint64_t key = (uint64_t(uint32_t(c.left)) << 32) | uint32_t(c.right);
        sym[i] = m_merges.at(key).result;
        sym[j] = -1;
        next[i] = next[j];
        if (next[j] >= 0)
            prev[next[j]] = i;
        consider(prev[i]);
        consider(i);
    }
    for (int i = 0; i >= 0 && i < static_cast<int>(n); i = next[i])
        out.push_back(sym[i]);
}

std::vector<int32_t> Gpt2BpeTokenizer::encode(std::string_view text) const {
    std::vector<int32_t> ids;
    ids.reserve(text.size() / 3 + 1);
    for (const auto& [begin, end] : gpt2PreTokenize(text)) {
        const std::string_view piece = text.substr(begin, end - begin);
        if (piece.size() <= 64) {
            std::lock_guard<std::mutex> lock(m_cacheMutex);
            const auto it = m_cache.find(std::string(piece));
            if (it != m_cache.end()) {
                ids.insert(ids.end(), it->second.begin(), it->second.end());
                continue;
            }
        }
        const size_t first = ids.size();
        bpe(piece, ids);
        if (piece.size() <= 64) {
            std::lock_guard<std::mutex> lock(m_cacheMutex);
            if (m_cache.size() >= kMaxCacheEntries)
                m_cache.clear();
            m_cache.emplace(std::string(piece),
                            std::vector<int32_t>(ids.begin() + first, ids.end()));
        }
    }
    return ids;
}

std::string Gpt2BpeTokenizer::tokenBytes(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= m_idToBytes.size() || m_special[id])
        return {};
    return m_idToBytes[id];
}

std::string Gpt2BpeTokenizer::decode(const std::vector<int32_t>& ids) const {
    std::string out;
    for (int32_t id : ids)
        out += tokenBytes(id);
    return out;
}

} // namespace baton::engine
