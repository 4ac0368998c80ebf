#include <baton/storage/eval_store.h>

#include "connection.h"
#include "statement.h"
#include "store_util.h"

namespace baton::storage {

namespace {

constexpr const char* kColumns =
    "SELECT id, model_id, model_path, text_id, text_hash, window_size, overlap, scored_tokens, "
    "nll, token_ppl, word_ppl, flops_per_token, seconds, created_at FROM eval_results ";

EvalResult readResult(const Statement& s) {
    EvalResult r;
    r.id = s.columnInt(0);
    r.modelId = s.isNull(1) ? 0 : s.columnInt(1);
    r.modelPath = s.columnText(2);
    r.textId = s.columnText(3);
    r.textHash = s.columnText(4);
    r.window = static_cast<int>(s.columnInt(5));
    r.overlap = static_cast<int>(s.columnInt(6));
    r.scoredTokens = s.columnInt(7);
    r.nll = s.columnDouble(8);
    r.tokenPpl = s.columnDouble(9);
    r.wordPpl = s.columnDouble(10);
    r.flopsPerToken = s.columnDouble(11);
    r.seconds = s.columnDouble(12);
    r.createdAt = s.columnInt(13);
    return r;
}

} // namespace

Result<int64_t> EvalStore::add(const EvalResult& r) {
    return guard<int64_t>([&]() -> Result<int64_t> {
        m_db.prepare("INSERT INTO eval_results (model_id, model_path, text_id, text_hash, "
                     "window_size, overlap, scored_tokens, nll, token_ppl, word_ppl, "
                     "flops_per_token, seconds, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                     "?8, ?9, ?10, ?11, ?12, ?13)")
            .bindId(1, r.modelId)
            .bind(2, r.modelPath)
            .bind(3, r.textId)
            .bind(4, r.textHash)
            .bind(5, r.window)
            .bind(6, r.overlap)
            .bind(7, r.scoredTokens)
            .bind(8, r.nll)
            .bind(9, r.tokenPpl)
            .bind(10, r.wordPpl)
            .bind(11, r.flopsPerToken)
            .bind(12, r.seconds)
            .bind(13, nowMs())
            .run();
        return m_db.lastInsertId();
    });
}

Result<EvalResult> EvalStore::get(int64_t id) {
    return guard<EvalResult>([&]() -> Result<EvalResult> {
        Statement s = m_db.prepare(std::string(kColumns) + "WHERE id = ?1");
        s.bind(1, id);
        if (!s.step())
            throwNotFound("evaluation result", id);
        return readResult(s);
    });
}

Result<std::vector<EvalResult>> EvalStore::list(const std::string& modelPath) {
    return guard<std::vector<EvalResult>>([&]() -> Result<std::vector<EvalResult>> {
        Statement s =
            m_db.prepare(std::string(kColumns) + (modelPath.empty() ? "ORDER BY id"
                                                                    : "WHERE model_path = ?1 "
                                                                      "ORDER BY id"));
        if (!modelPath.empty())
            s.bind(1, modelPath);
        std::vector<EvalResult> out;
        while (s.step())
            out.push_back(readResult(s));
        return out;
    });
}

Result<void> EvalStore::remove(int64_t id) {
    return guard<void>([&]() -> Result<void> {
        m_db.prepare("DELETE FROM eval_results WHERE id = ?1").bind(1, id).run();
        if (m_db.changes() == 0)
            throwNotFound("evaluation result", id);
        return {};
    });
}

} // namespace baton::storage
