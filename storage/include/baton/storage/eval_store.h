// Evaluation results: one row per (model, text, T, o) measurement.
#pragma once

#include "baton/storage/error.h"
#include "baton/storage/records.h"

#include <string>
#include <vector>

namespace baton::storage {

class Connection;

class EvalStore {
public:
    explicit EvalStore(Connection& connection)
        : m_db(connection) {}

    Result<int64_t> add(const EvalResult& result);
    Result<EvalResult> get(int64_t id);
    // All results, or those of one model path, oldest first.
    Result<std::vector<EvalResult>> list(const std::string& modelPath = {});
    Result<void> remove(int64_t id);

private:
    Connection& m_db;
};

} // namespace baton::storage
