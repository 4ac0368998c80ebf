// baton_spm: SentencePiece behind a C interface (see spm_abi.h). Built as a MODULE
// with hidden visibility; only the functions below are exported.
#include "tokenizer/spm_abi.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#define BATON_SPM_API extern "C" __attribute__((visibility("default")))

struct BatonSpmModel {
    sentencepiece::SentencePieceProcessor processor;
};

namespace {

void writeError(char* err, size_t cap, const std::string& message) {
    if (err == nullptr || cap == 0)
        return;
    const size_t n = std::min(cap - 1, message.size());
    std::memcpy(err, message.data(), n);
    err[n] = '\0';
}

class TextLines : public sentencepiece::SentenceIterator {
public:
    TextLines(const char* const* texts, const size_t* lengths, size_t count)
        : m_texts(texts)
        , m_lengths(lengths)
        , m_count(count) {
        advance();
    }
    bool done() const override { return m_done; }
    void Next() override { advance(); }
    const std::string& value() const override { return m_line; }
    sentencepiece::util::Status status() const override { return {}; }

private:
    void advance() {
        while (m_text < m_count) {
            const char* t = m_texts[m_text];
            const size_t len = m_lengths[m_text];
            if (m_pos >= len) {
                ++m_text;
                m_pos = 0;
                continue;
            }
            const char* nl = static_cast<const char*>(std::memchr(t + m_pos, '\n', len - m_pos));
            const size_t end = nl ? static_cast<size_t>(nl - t) : len;
            m_line.assign(t + m_pos, end - m_pos);
            m_pos = end + 1;
            if (!m_line.empty())
                return;
        }
        m_done = true;
    }
    const char* const* m_texts;
    const size_t* m_lengths;
    size_t m_count;
    size_t m_text = 0;
    size_t m_pos = 0;
    std::string m_line;
    bool m_done = false;
};

// Nothing may throw across the module's C boundary: SentencePiece (darts-clone inside
// it) throws on some damaged model files ("zero-length key"), which would end the
// process. Any exception becomes the failure value and, where there is room, a message.
template <typename R, typename F>
R guarded(R failure, char* err, size_t errCap, F&& body) noexcept {
    try {
        return body();
    } catch (const std::exception& e) {
        writeError(err, errCap, std::string("SentencePiece failed: ") + e.what());
    } catch (...) {
        writeError(err, errCap, "SentencePiece failed with an unknown exception");
    }
    return failure;
}

} // namespace

BATON_SPM_API int baton_spm_abi_version(void) {
    return BATON_SPM_ABI_VERSION;
}

BATON_SPM_API BatonSpmModel* baton_spm_load(const char* data, size_t size, char* err,
                                            size_t errCap) {
    return guarded<BatonSpmModel*>(nullptr, err, errCap, [&]() -> BatonSpmModel* {
        auto model = std::make_unique<BatonSpmModel>();
        const auto status = model->processor.LoadFromSerializedProto(std::string(data, size));
        if (!status.ok()) {
            writeError(err, errCap, status.ToString());
            return nullptr;
        }
        return model.release();
    });
}

BATON_SPM_API void baton_spm_free(BatonSpmModel* model) {
    delete model;
}

BATON_SPM_API int baton_spm_vocab_size(const BatonSpmModel* model) {
    return model->processor.GetPieceSize();
}

BATON_SPM_API int64_t baton_spm_encode(const BatonSpmModel* model, const char* text, size_t len,
                                       int32_t* out, size_t cap) {
    return guarded<int64_t>(-1, nullptr, 0, [&]() -> int64_t {
        std::vector<int> ids;
        const auto status = model->processor.Encode(std::string(text, len), &ids);
        if (!status.ok())
            return -1;
        for (size_t i = 0; i < ids.size() && i < cap; ++i)
            out[i] = ids[i];
        return static_cast<int64_t>(ids.size());
    });
}

BATON_SPM_API int64_t baton_spm_piece(const BatonSpmModel* model, int32_t id, char* out,
                                      size_t cap) {
    if (id < 0 || id >= model->processor.GetPieceSize())
        return -1;
    const std::string& piece = model->processor.IdToPiece(id);
    std::memcpy(out, piece.data(), std::min(cap, piece.size()));
    return static_cast<int64_t>(piece.size());
}

BATON_SPM_API int baton_spm_piece_kind(const BatonSpmModel* model, int32_t id) {
    const auto& p = model->processor;
    if (p.IsControl(id))
        return BATON_SPM_CONTROL;
    if (p.IsUnknown(id))
        return BATON_SPM_UNKNOWN;
    if (p.IsByte(id))
        return BATON_SPM_BYTE;
    if (p.IsUnused(id))
        return BATON_SPM_UNUSED;
    return BATON_SPM_NORMAL;
}

BATON_SPM_API int baton_spm_special_id(const BatonSpmModel* model, int which) {
    const auto& p = model->processor;
    switch (which) {
    case 0:
        return p.unk_id();
    case 1:
        return p.bos_id();
    case 2:
        return p.eos_id();
    case 3:
        return p.pad_id();
    default:
        return -1;
    }
}

BATON_SPM_API int64_t baton_spm_decode(const BatonSpmModel* model, const int32_t* ids, size_t n,
                                       char* out, size_t cap) {
    return guarded<int64_t>(-1, nullptr, 0, [&]() -> int64_t {
        std::vector<int> v(ids, ids + n);
        std::string text;
        if (!model->processor.Decode(v, &text).ok())
            return -1;
        std::memcpy(out, text.data(), std::min(cap, text.size()));
        return static_cast<int64_t>(text.size());
    });
}

BATON_SPM_API int baton_spm_train(const char* const* texts, const size_t* lengths, size_t count,
                                  const char* const* keys, const char* const* values,
                                  size_t optionCount, const char* outPath, char* err,
                                  size_t errCap) {
    return guarded<int>(3, err, errCap, [&]() -> int {
        std::unordered_map<std::string, std::string> options;
        for (size_t i = 0; i < optionCount; ++i)
            options[keys[i]] = values[i];
        TextLines lines(texts, lengths, count);
        std::string proto;
        const auto status = sentencepiece::SentencePieceTrainer::Train(options, &lines, &proto);
        if (!status.ok()) {
            writeError(err, errCap, status.ToString());
            return 1;
        }
        std::ofstream out(outPath, std::ios::binary | std::ios::trunc);
        out.write(proto.data(), static_cast<std::streamsize>(proto.size()));
        out.close();
        if (!out) {
            writeError(err, errCap, std::string("cannot write ") + outPath);
            return 2;
        }
        return 0;
    });
}
