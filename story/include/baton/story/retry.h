// What a retry rewrites: the last generation at the end of a path (value level: the
// app computes it from the path it shows, the story service from the database's).
#pragma once

#include <baton/storage/records.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace baton::story {

// What a retry rewrites: the last generation, when the path ends with one. Its text is
// path[firstIndex..]; the alternative is generated under parentId (0: the beginning).
struct RetryTarget {
    int64_t parentId = 0;
    size_t firstIndex = 0;
};
// By the passages' generation ids; passages written before generations were recorded
// (schema v3) count as one generation when they are the path's trailing run of model
// passages.
std::optional<RetryTarget> retryTarget(const std::vector<storage::Passage>& path);

} // namespace baton::story
