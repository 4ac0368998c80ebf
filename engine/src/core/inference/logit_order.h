// The order every sampler stage reads candidates in: by logit, largest first, equal
// logits by increasing id. Internal to the engine; no torch here.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace baton::engine {

// Sorts items into the order of std::sort with (a.logit != b.logit ? a.logit > b.logit
// : a.id < b.id), where logitOf and idOf read an item's logit (never NaN) and id. Top-p
// and min-p sort nearly the whole vocabulary for every token (docs/performance.md,
// Sampling), so large inputs go through a stable radix sort on the logits' bits: three
// passes of 11 bits (a pass where every item has the same digit is skipped), linear in
// the count. Equal logits then keep the order they came in, which callers give by id;
// a run that is not is sorted by id, so the order is the comparison's in every case.
// Items already in that order (the candidates left after a cut) are checked and left.
template <class T, class LogitOf, class IdOf>
void sortByLogit(std::vector<T>& items, LogitOf logitOf, IdOf idOf) {
    auto byId = [&](const T& a, const T& b) { return idOf(a) < idOf(b); };
    auto before = [&](const T& a, const T& b) {
        const float x = logitOf(a), y = logitOf(b);
        return x != y ? x > y : idOf(a) < idOf(b);
    };
    const size_t n = items.size();
    if (std::is_sorted(items.begin(), items.end(), before))
        return; // a stage's candidates, sorted again after a cut
    if (n < 256) {
        std::sort(items.begin(), items.end(), before);
        return;
    }
    // A key that orders as the logit does, largest first; -0 and +0 alike.
    auto key = [&](const T& item) {
        float f = logitOf(item);
        if (f == 0.f)
            f = 0.f;
        uint32_t u;
        std::memcpy(&u, &f, sizeof u);
        u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
        return ~u;
    };
    constexpr int kBits = 11, kPasses = 3;
    constexpr uint32_t kDigits = 1u << kBits;
    std::vector<uint32_t> count(kPasses * kDigits, 0);
    for (const T& item : items) {
        const uint32_t k = key(item);
        for (int p = 0; p < kPasses; ++p)
            ++count[p * kDigits + ((k >> (kBits * p)) & (kDigits - 1))];
    }
    thread_local std::vector<T> scratch;
    scratch.resize(n);
    for (int p = 0; p < kPasses; ++p) {
        uint32_t* at = count.data() + p * kDigits;
        if (at[(key(items[0]) >> (kBits * p)) & (kDigits - 1)] == n)
            continue; // one digit: nothing moves
        uint32_t sum = 0;
        for (uint32_t d = 0; d < kDigits; ++d)
            sum += std::exchange(at[d], sum);
        for (const T& item : items)
            scratch[at[(key(item) >> (kBits * p)) & (kDigits - 1)]++] = item;
        items.swap(scratch);
    }
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && logitOf(items[j]) == logitOf(items[i]))
            ++j;
        if (!std::is_sorted(items.begin() + i, items.begin() + j, byId))
            std::sort(items.begin() + i, items.begin() + j, byId);
        i = j;
    }
}

} // namespace baton::engine
