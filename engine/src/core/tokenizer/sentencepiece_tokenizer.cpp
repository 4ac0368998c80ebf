#include "tokenizer/sentencepiece_tokenizer.h"

#include "util/files.h"
#include "util/hash.h"
#include "util/utf8.h"

namespace baton::engine {

Result<std::shared_ptr<SentencePieceTokenizer>>
SentencePieceTokenizer::fromFile(const std::string& path) {
    auto data = files::readAll(path, size_t(512) << 20);
    if (!data)
        return data.error();
    return fromData(*data);
}

Result<std::shared_ptr<SentencePieceTokenizer>>
SentencePieceTokenizer::fromData(std::string_view serialized) {
    auto lib = spmLibrary();
    if (!lib)
        return lib.error();
    auto tok = std::shared_ptr<SentencePieceTokenizer>(new SentencePieceTokenizer());
    tok->m_lib = *lib;
    char err[512] = {};
    tok->m_model = tok->m_lib->load(serialized.data(), serialized.size(), err, sizeof(err));
    if (tok->m_model == nullptr)
        return makeError(ErrorCode::TokenizerInvalid,
                         std::string("invalid SentencePiece model: ") + err);
    const int n = tok->m_lib->vocabSize(tok->m_model);
    tok->m_tokenBytes.resize(static_cast<size_t>(n));
    std::string piece;
    for (int id = 0; id < n; ++id) {
        piece.resize(64);
        int64_t len = tok->m_lib->piece(tok->m_model, id, piece.data(), piece.size());
        if (len > static_cast<int64_t>(piece.size())) {
            piece.resize(static_cast<size_t>(len));
            len = tok->m_lib->piece(tok->m_model, id, piece.data(), piece.size());
        }
        piece.resize(static_cast<size_t>(std::max<int64_t>(len, 0)));
        std::string bytes;
        switch (tok->m_lib->pieceKind(tok->m_model, id)) {
        case BATON_SPM_CONTROL:
        case BATON_SPM_UNUSED:
            break;
        case BATON_SPM_UNKNOWN:
            bytes = "\xEF\xBF\xBD"; // U+FFFD
            break;
        case BATON_SPM_BYTE: // "<0xAB>"
            if (piece.size() == 6)
                bytes.push_back(static_cast<char>(std::stoi(piece.substr(3, 2), nullptr, 16)));
            break;
        default:
            // U+2581 (the SentencePiece space marker) stands for a space.
            for (size_t i = 0; i < piece.size();) {
                if (piece.compare(i, 3, "\xE2\x96\x81") == 0) {
                    bytes.push_back(' ');
                    i += 3;
                } else {
                    bytes.push_back(piece[i++]);
                }
            }
        }
        tok->m_tokenBytes[static_cast<size_t>(id)] = std::move(bytes);
    }
    tok->m_eosId = tok->m_lib->specialId(tok->m_model, 2);
    ContentHash h;
    h.update("sentencepiece\n");
    h.update(serialized);
    tok->m_identity = h.hex();
    return tok;
}

SentencePieceTokenizer::~SentencePieceTokenizer() {
    if (m_model)
        m_lib->free(m_model);
}

std::vector<int32_t> SentencePieceTokenizer::encode(std::string_view text) const {
    const std::string clean = utf8::sanitize(text);
    std::vector<int32_t> ids(clean.size() + 16);
    int64_t n = m_lib->encode(m_model, clean.data(), clean.size(), ids.data(), ids.size());
    if (n > static_cast<int64_t>(ids.size())) {
        ids.resize(static_cast<size_t>(n));
        n = m_lib->encode(m_model, clean.data(), clean.size(), ids.data(), ids.size());
    }
    ids.resize(static_cast<size_t>(std::max<int64_t>(n, 0)));
    return ids;
}

std::string SentencePieceTokenizer::decode(const std::vector<int32_t>& ids) const {
    std::string out;
    for (int32_t id : ids)
        out += tokenBytes(id);
    return out;
}

std::string SentencePieceTokenizer::tokenBytes(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= m_tokenBytes.size())
        return {};
    return m_tokenBytes[static_cast<size_t>(id)];
}

Result<void> SentencePieceTokenizer::train(const std::vector<std::string_view>& texts,
                                           const std::map<std::string, std::string>& options,
                                           const std::string& outPath) {
    auto lib = spmLibrary();
    if (!lib)
        return lib.error();
    std::vector<const char*> ptrs;
    std::vector<size_t> lens;
    for (auto t : texts) {
        ptrs.push_back(t.data());
        lens.push_back(t.size());
    }
    std::vector<const char*> keys, values;
    for (const auto& [k, v] : options) {
        keys.push_back(k.c_str());
        values.push_back(v.c_str());
    }
    char err[1024] = {};
    const std::string tmp = outPath + ".partial";
    if ((*lib)->train(ptrs.data(), lens.data(), ptrs.size(), keys.data(), values.data(),
                      keys.size(), tmp.c_str(), err, sizeof(err)) != 0)
        return makeError(ErrorCode::InvalidArgument,
                         std::string("SentencePiece training failed: ") + err);
    auto data = files::readAll(tmp);
    if (!data)
        return data.error();
    std::remove(tmp.c_str());
    return files::writeAtomically(outPath, *data);
}

} // namespace baton::engine
