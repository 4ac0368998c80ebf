#include "baton/story/edit.h"

#include "baton/story/prompt.h"

#include <baton/engine/text.h>
#include <baton/storage/database.h>
#include <baton/storage/story_store.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>

namespace baton::story {

namespace {

// A word (letters, digits, '_' and every byte of a multi-byte character) or any other
// single byte: the units the diff compares. A unit never splits a UTF-8 character.
struct Unit {
    size_t begin = 0, end = 0;
    size_t hash = 0;
};

std::vector<Unit> units(std::string_view text) {
    std::vector<Unit> out;
    size_t i = 0;
    while (i < text.size()) {
        size_t j = i + 1;
        if (engine::isWordByte(text[i]))
            while (j < text.size() && engine::isWordByte(text[j]))
                ++j;
        out.push_back({i, j, std::hash<std::string_view>{}(text.substr(i, j - i))});
        i = j;
    }
    return out;
}

// A stretch that differs: old bytes [a0, a1) became new bytes [b0, b1).
struct Hunk {
    size_t a0, a1, b0, b1;
};

// More differing units than this and the middle is taken as one changed stretch (the
// passages around it are still found exactly: only those it spans change).
constexpr int kMaxEditScript = 4000;

// Myers' greedy diff of a[ab, ae) against b[bb, be): the hunks in order, or nullopt when
// the edit script would be longer than kMaxEditScript.
std::optional<std::vector<Hunk>> myers(const std::vector<Unit>& a, std::string_view at,
                                       const std::vector<Unit>& b, std::string_view bt, size_t ab,
                                       size_t ae, size_t bb, size_t be) {
    const int n = static_cast<int>(ae - ab), m = static_cast<int>(be - bb);
    auto same = [&](int x, int y) {
        const Unit& u = a[ab + size_t(x)];
        const Unit& v = b[bb + size_t(y)];
        return u.hash == v.hash &&
               at.substr(u.begin, u.end - u.begin) == bt.substr(v.begin, v.end - v.begin);
    };
    const int most = std::min(n + m, kMaxEditScript);
    const int offset = most + 1;
    std::vector<int> v(size_t(2 * most + 3), 0);
    std::vector<std::vector<int>> trace;
    int found = -1;
    for (int d = 0; d <= most && found < 0; ++d) {
        trace.push_back(v);
        for (int k = -d; k <= d; k += 2) {
            int x = (k == -d || (k != d && v[size_t(offset + k - 1)] < v[size_t(offset + k + 1)]))
                        ? v[size_t(offset + k + 1)]
                        : v[size_t(offset + k - 1)] + 1;
            int y = x - k;
            while (x < n && y < m && same(x, y)) {
                ++x;
                ++y;
            }
            v[size_t(offset + k)] = x;
            if (x >= n && y >= m) {
                found = d;
                break;
            }
        }
    }
    if (found < 0)
        return std::nullopt;
    // Walk back: each step is an insertion or a deletion, then a run of equal units.
    struct Step {
        int x, y;    // where the step starts
        bool insert; // of b[y], else a deletion of a[x]
    };
    std::vector<Step> steps;
    int x = n, y = m;
    for (int d = found; d > 0; --d) {
        const std::vector<int>& pv = trace[size_t(d)];
        const int k = x - y;
        const bool down =
            k == -d || (k != d && pv[size_t(offset + k - 1)] < pv[size_t(offset + k + 1)]);
        const int pk = down ? k + 1 : k - 1;
        const int px = pv[size_t(offset + pk)], py = px - pk;
        steps.push_back({px, py, down});
        x = px;
        y = py;
    }
    std::reverse(steps.begin(), steps.end());
    // Unit indices -> byte offsets, adjacent steps merged into hunks.
    auto aPos = [&](int i) { return i < n ? a[ab + size_t(i)].begin : a[ae - 1].end; };
    auto bPos = [&](int j) { return j < m ? b[bb + size_t(j)].begin : b[be - 1].end; };
    std::vector<Hunk> hunks;
    int hx0 = -1, hy0 = -1, hx1 = 0, hy1 = 0;
    auto flush = [&] {
        if (hx0 >= 0)
            hunks.push_back({aPos(hx0), hx1 > hx0 ? aPos(hx1) : aPos(hx0), bPos(hy0),
                             hy1 > hy0 ? bPos(hy1) : bPos(hy0)});
        hx0 = -1;
    };
    for (const Step& s : steps) {
        const int ex = s.insert ? s.x : s.x + 1, ey = s.insert ? s.y + 1 : s.y;
        if (hx0 < 0 || s.x != hx1 || s.y != hy1) {
            flush();
            hx0 = s.x;
            hy0 = s.y;
        }
        hx1 = ex;
        hy1 = ey;
    }
    flush();
    return hunks;
}

// Where each unit index starts, with an end position for index == size.
size_t startOf(const std::vector<Unit>& u, size_t i, size_t textSize) {
    return i < u.size() ? u[i].begin : textSize;
}

std::vector<Hunk> diff(std::string_view before, std::string_view now) {
    const std::vector<Unit> a = units(before), b = units(now);
    auto equal = [&](size_t i, size_t j) {
        return a[i].hash == b[j].hash && before.substr(a[i].begin, a[i].end - a[i].begin) ==
                                             now.substr(b[j].begin, b[j].end - b[j].begin);
    };
    size_t pre = 0;
    while (pre < a.size() && pre < b.size() && equal(pre, pre))
        ++pre;
    size_t suf = 0;
    while (suf < a.size() - pre && suf < b.size() - pre &&
           equal(a.size() - 1 - suf, b.size() - 1 - suf))
        ++suf;
    const size_t ae = a.size() - suf, be = b.size() - suf;
    if (pre == ae && pre == be)
        return {};
    const size_t a0 = startOf(a, pre, before.size()), a1 = startOf(a, ae, before.size());
    const size_t b0 = startOf(b, pre, now.size()), b1 = startOf(b, be, now.size());
    if (pre == ae || pre == be)
        return {{a0, a1, b0, b1}};
    if (auto hunks = myers(a, before, b, now, pre, ae, pre, be))
        return *hunks;
    return {{a0, a1, b0, b1}};
}

// Where an old passage boundary at byte p lies in the new text.
size_t mapBoundary(size_t p, const std::vector<Hunk>& hunks) {
    long long delta = 0;
    for (const Hunk& h : hunks) {
        if (h.a1 < p || (h.a1 == p && h.a0 < h.a1)) {
            // Ends before the boundary, or a deletion that ends at it (its new text
            // stays with the passage before).
            if (h.a1 == p)
                return h.b1;
            delta += static_cast<long long>(h.b1 - h.b0) - static_cast<long long>(h.a1 - h.a0);
            continue;
        }
        if (h.a0 < p) // spans it: what replaced the stretch goes to the passage before
            return h.b1;
        if (h.a0 == p) // starts at it (an insertion there): the passage after takes it
            return h.b0;
        break;
    }
    return static_cast<size_t>(static_cast<long long>(p) + delta);
}

} // namespace

std::vector<PassageEdit> diffTexts(const std::vector<int64_t>& ids,
                                   const std::vector<std::string>& before, std::string_view now) {
    std::vector<PassageEdit> edits;
    if (ids.empty() || ids.size() != before.size())
        return edits;
    std::string old;
    std::vector<size_t> ends;
    for (const auto& t : before)
        ends.push_back((old += t).size());
    const std::vector<Hunk> hunks = diff(old, now);
    if (hunks.empty())
        return edits;
    size_t start = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
        size_t end = i + 1 == ids.size() ? now.size() : mapBoundary(ends[i], hunks);
        end = std::clamp(end, start, now.size());
        std::string after(now.substr(start, end - start));
        if (after != before[i])
            edits.push_back({ids[i], before[i], std::move(after)});
        start = end;
    }
    return edits;
}

std::vector<PassageEdit> diffPassages(const std::vector<storage::Passage>& path,
                                      std::string_view now) {
    std::vector<int64_t> ids;
    std::vector<std::string> texts;
    for (const auto& p : path) {
        ids.push_back(p.id);
        texts.push_back(p.text);
    }
    return diffTexts(ids, texts, now);
}

Result<int64_t> saveEdits(storage::Database& db, const std::vector<PassageEdit>& edits) {
    int64_t deleted = 0;
    auto r = db.transaction([&]() -> storage::Result<void> {
        for (const auto& e : edits) {
            auto n = db.stories().editPassage(e.passageId, e.after);
            if (!n)
                return n.error();
            deleted += *n;
        }
        return {};
    });
    if (!r)
        return storageError(r.error());
    return deleted;
}

Result<size_t> trimToSentence(storage::Database& db, int64_t storyId, int64_t generationId) {
    auto path = db.stories().currentPath(storyId);
    if (!path)
        return storageError(path.error());
    size_t first = path->size(); // the generation's chunks: the end of the path
    while (first > 0 && (*path)[first - 1].generationId == generationId && generationId != 0)
        --first;
    if (first == path->size())
        return size_t(0);
    std::string text;
    for (const auto& p : *path)
        text += p.text;
    size_t generationStart = 0;
    for (size_t i = 0; i < first; ++i)
        generationStart += (*path)[i].text.size();
    size_t cut = text.size() - unfinishedTail(text);
    while (cut > generationStart && (text[cut - 1] == ' ' || text[cut - 1] == '\t'))
        --cut; // no trailing space after the sentence
    if (cut <= generationStart || cut == text.size())
        return size_t(0); // no whole sentence in it, or nothing to cut
    // The chunk the cut falls in keeps its text up to it; the chunks after it go.
    size_t at = generationStart, i = first;
    while (i < path->size() && at + (*path)[i].text.size() < cut)
        at += (*path)[i++].text.size();
    auto r = db.transaction([&]() -> storage::Result<void> {
        if (i + 1 < path->size())
            if (auto removed = db.stories().removePassage((*path)[i + 1].id); !removed)
                return removed.error();
        const std::string kept = (*path)[i].text.substr(0, cut - at);
        if (kept != (*path)[i].text) {
            if (kept.empty()) { // the cut is at the chunk's start: it goes too
                if (auto removed = db.stories().removePassage((*path)[i].id); !removed)
                    return removed.error();
            } else if (auto edited = db.stories().editPassage((*path)[i].id, kept, true); !edited) {
                return edited.error();
            }
        }
        return {};
    });
    if (!r)
        return storageError(r.error());
    return text.size() - cut;
}

Result<EditResult> findAndReplace(storage::Database& db, int64_t storyId, std::string_view find,
                                  std::string_view replace) {
    if (find.empty())
        return requestError("there is nothing to find: the text to replace is empty");
    auto path = db.stories().currentPath(storyId);
    if (!path)
        return storageError(path.error());
    std::string text;
    for (const auto& p : *path)
        text += p.text;
    const size_t at = text.rfind(find);
    if (at == std::string::npos)
        return requestError("\"" + std::string(find) +
                            "\" does not occur in the story's current path");
    text.replace(at, find.size(), replace);
    EditResult out;
    out.edits = diffPassages(*path, text);
    auto deleted = saveEdits(db, out.edits);
    if (!deleted)
        return deleted.error();
    out.statesDeleted = *deleted;
    return out;
}

} // namespace baton::story
