#include "baton/story/token_choices.h"

#include <baton/engine/text.h>
#include <baton/storage/database.h>
#include <baton/storage/generation_store.h>
#include <baton/storage/story_store.h>
#include <baton/storage/token_choice_store.h>

#include <cmath>
#include <cstring>

namespace baton::story {

namespace {

// The blob: "BTC" and a version byte, a u32 count of tokens, then per token a text
// (u16 length, bytes), its log-probability (f32) and a u8 count of alternatives, each a
// text and a log-probability. Little-endian.
constexpr uint8_t kMagic[3] = {'B', 'T', 'C'};
constexpr uint8_t kVersion = 1;
constexpr size_t kMaxText = 0xffff;
constexpr size_t kMaxAlternatives = 20;

class Writer {
public:
    void bytes(const void* p, size_t n) {
        const auto* b = static_cast<const uint8_t*>(p);
        out.insert(out.end(), b, b + n);
    }
    void u8(uint8_t v) { out.push_back(v); }
    void u16(uint16_t v) {
        u8(uint8_t(v & 0xff));
        u8(uint8_t(v >> 8));
    }
    void u32(uint32_t v) {
        u16(uint16_t(v & 0xffff));
        u16(uint16_t(v >> 16));
    }
    void f32(float v) {
        uint32_t bits = 0;
        std::memcpy(&bits, &v, sizeof(bits));
        u32(bits);
    }
    void text(const std::string& s) {
        u16(uint16_t(s.size()));
        bytes(s.data(), s.size());
    }
    std::vector<uint8_t> out;
};

class Reader {
public:
    explicit Reader(const std::vector<uint8_t>& b)
        : m_b(b) {}
    bool ok() const { return m_ok; }
    bool atEnd() const { return m_at == m_b.size(); }
    uint8_t u8() {
        if (!need(1))
            return 0;
        return m_b[m_at++];
    }
    uint16_t u16() {
        const uint16_t lo = u8();
        return uint16_t(lo | (uint16_t(u8()) << 8));
    }
    uint32_t u32() {
        const uint32_t lo = u16();
        return lo | (uint32_t(u16()) << 16);
    }
    float f32() {
        const uint32_t bits = u32();
        float v = 0;
        std::memcpy(&v, &bits, sizeof(v));
        return v;
    }
    std::string text() {
        const size_t n = u16();
        if (!need(n))
            return {};
        std::string s(reinterpret_cast<const char*>(m_b.data() + m_at), n);
        m_at += n;
        return s;
    }
    size_t left() const { return m_b.size() - m_at; }

private:
    bool need(size_t n) {
        if (!m_ok || m_b.size() - m_at < n) {
            m_ok = false;
            return false;
        }
        return true;
    }
    const std::vector<uint8_t>& m_b;
    size_t m_at = 0;
    bool m_ok = true;
};

bool usableText(const std::string& s) {
    return !s.empty() && s.size() <= kMaxText &&
           engine::firstInvalidUtf8(s) == std::string_view::npos;
}

Error damaged(const std::string& what) {
    return requestError("the recorded token alternatives are damaged (" + what + ")");
}

} // namespace

std::vector<uint8_t> encodeChoices(const std::vector<TokenChoice>& choices) {
    size_t n = 0; // a token whose text cannot be written ends the run (the rest would not align)
    while (n < choices.size() && choices[n].text.size() <= kMaxText &&
           engine::firstInvalidUtf8(choices[n].text) == std::string_view::npos)
        ++n;
    Writer w;
    w.bytes(kMagic, sizeof(kMagic));
    w.u8(kVersion);
    const size_t countAt = w.out.size();
    w.u32(0); // the count, written once known
    uint32_t written = 0;
    for (size_t i = 0; i < n; ++i) {
        const TokenChoice& c = choices[i];
        const size_t before = w.out.size();
        w.text(c.text);
        // Unknown (NaN) unless it is a probability.
        w.f32(c.logprob <= 0 && !std::isinf(c.logprob) ? c.logprob
                                                       : std::numeric_limits<float>::quiet_NaN());
        std::vector<const Alternative*> kept;
        for (const Alternative& a : c.alternatives)
            if (kept.size() < kMaxAlternatives && usableText(a.text) && a.logprob <= 0)
                kept.push_back(&a);
        w.u8(uint8_t(kept.size()));
        for (const Alternative* a : kept) {
            w.text(a->text);
            w.f32(a->logprob);
        }
        if (w.out.size() > kMaxChoicesBlob) { // the leading tokens still describe the text
            w.out.resize(before);
            break;
        }
        ++written;
    }
    for (int b = 0; b < 4; ++b)
        w.out[countAt + size_t(b)] = uint8_t(written >> (8 * b));
    return std::move(w.out);
}

Result<std::vector<TokenChoice>> decodeChoices(const std::vector<uint8_t>& blob) {
    Reader r(blob);
    uint8_t magic[3] = {r.u8(), r.u8(), r.u8()};
    if (!r.ok() || std::memcmp(magic, kMagic, sizeof(kMagic)) != 0)
        return damaged("not a token-alternatives blob");
    if (const uint8_t v = r.u8(); v != kVersion)
        return damaged("format version " + std::to_string(v) + ", this build reads " +
                       std::to_string(kVersion));
    const uint32_t count = r.u32();
    // Every token takes at least 7 bytes: a count that cannot fit is a lie.
    if (!r.ok() || count > r.left() / 7)
        return damaged("a token count of " + std::to_string(count) + " in " +
                       std::to_string(blob.size()) + " bytes");
    std::vector<TokenChoice> out(count);
    for (TokenChoice& c : out) {
        c.text = r.text();
        c.logprob = r.f32();
        const size_t alternatives = r.u8();
        if (!r.ok())
            return damaged("it ends early");
        if (engine::firstInvalidUtf8(c.text) != std::string_view::npos)
            return damaged("a token's text is not UTF-8");
        if (c.logprob > 0 || std::isinf(c.logprob) || alternatives > kMaxAlternatives)
            return damaged("a token's probability or count of alternatives is out of range");
        c.alternatives.resize(alternatives);
        for (Alternative& a : c.alternatives) {
            a.text = r.text();
            a.logprob = r.f32();
            if (!r.ok())
                return damaged("it ends early");
            if (!usableText(a.text) || !(a.logprob <= 0))
                return damaged("an alternative's text or probability is out of range");
        }
    }
    if (!r.atEnd())
        return damaged("bytes after the last token");
    return out;
}

std::vector<TokenChoice> alignChoices(std::vector<TokenChoice> choices, std::string_view text) {
    size_t at = 0, n = 0;
    while (n < choices.size() && text.substr(at, choices[n].text.size()) == choices[n].text) {
        at += choices[n].text.size();
        ++n;
    }
    choices.resize(n);
    return choices;
}

Result<std::vector<TokenChoice>> readChoices(const std::vector<uint8_t>& blob,
                                             std::string_view text) {
    if (blob.empty())
        return std::vector<TokenChoice>{};
    auto choices = decodeChoices(blob);
    if (!choices)
        return choices.error();
    return alignChoices(std::move(*choices), text);
}

Result<std::vector<TokenChoice>> passageChoices(storage::Database& db, int64_t passageId) {
    auto passage = db.stories().passage(passageId);
    if (!passage)
        return storageError(passage.error());
    auto blob = db.tokenChoices().get(passageId);
    if (!blob)
        return storageError(blob.error());
    return readChoices(*blob, passage->text);
}

Result<int64_t> branchAtToken(storage::Database& db, int64_t storyId, const TokenBranch& at,
                              const std::string& settingsJson) {
    auto passage = db.stories().passage(at.passageId);
    if (!passage)
        return storageError(passage.error());
    if (passage->storyId != storyId)
        return requestError("that passage belongs to another story");
    auto choices = passageChoices(db, at.passageId);
    if (!choices)
        return choices.error();
    if (at.token < 0 || size_t(at.token) >= choices->size())
        return requestError("passage " + std::to_string(at.passageId) + " has no token " +
                            std::to_string(at.token) + " with recorded alternatives");
    std::vector<TokenChoice> kept(choices->begin(), choices->begin() + at.token + 1);
    TokenChoice& picked = kept.back();
    if (at.alternative < 0 || size_t(at.alternative) >= picked.alternatives.size())
        return requestError("that token has no alternative " + std::to_string(at.alternative));
    const Alternative chosen = picked.alternatives[size_t(at.alternative)];
    if (chosen.text == picked.text)
        return requestError("that alternative is the text already written");
    // The token it replaces stays among the alternatives, so the writer can go back.
    bool listed = false;
    for (const Alternative& a : picked.alternatives)
        listed = listed || a.text == picked.text;
    if (!listed && !picked.text.empty() && picked.logprob <= 0) {
        auto& list = picked.alternatives;
        auto pos = list.begin();
        while (pos != list.end() && pos->logprob >= picked.logprob)
            ++pos;
        list.insert(pos, Alternative{picked.text, picked.logprob});
    }
    std::string text;
    for (size_t i = 0; i + 1 < kept.size(); ++i)
        text += kept[i].text;
    text += chosen.text;
    picked.text = chosen.text;
    picked.logprob = chosen.logprob;

    int64_t id = 0;
    auto r = db.transaction([&]() -> storage::Result<void> {
        auto generation = db.generations().begin(storyId, passage->parentId,
                                                 settingsJson.empty() ? "{}" : settingsJson);
        if (!generation)
            return generation.error();
        auto added = db.stories().addPassage(storyId, passage->parentId, text,
                                             storage::PassageAuthor::Model, true, *generation);
        if (!added)
            return added.error();
        id = *added;
        return db.tokenChoices().set(id, encodeChoices(kept));
    });
    if (!r)
        return storageError(r.error());
    return id;
}

} // namespace baton::story
