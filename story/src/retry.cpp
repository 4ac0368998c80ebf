#include "baton/story/retry.h"

namespace baton::story {

std::optional<RetryTarget> retryTarget(const std::vector<storage::Passage>& path) {
    if (path.empty())
        return std::nullopt;
    const storage::Passage& last = path.back();
    size_t first = path.size();
    if (last.generationId != 0) {
        while (first > 0 && path[first - 1].generationId == last.generationId)
            --first;
    } else {
        while (first > 0 && path[first - 1].author == storage::PassageAuthor::Model &&
               path[first - 1].generationId == 0)
            --first;
    }
    if (first == path.size())
        return std::nullopt;
    return RetryTarget{first > 0 ? path[first - 1].id : 0, first};
}

} // namespace baton::story
