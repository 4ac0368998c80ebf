#include "baton/story/context.h"

#include <baton/engine/generator.h>
#include <baton/storage/lore_store.h>
#include <baton/storage/story_store.h>

#include <algorithm>

namespace baton::story {

Prompt ContinuationPlan::promptAfter(int64_t afterPassage) const {
    return continuationPrompt(story, point.path, afterPassage, layout, lore, pending);
}

Result<WindowLayout> windowLayout(const storage::Story& story, const engine::Model& model,
                                  const StorySettings& settings) {
    WindowLayout out;
    const engine::ModelInfo& info = model.info();
    out.windows = engine::resolveWindows(info, settings.windows);
    if (auto r = engine::validateWindows(out.windows, info.config.nPositions); !r)
        return engineError(r.error());
    const auto tokenizer = model.tokenizer();
    if (!tokenizer)
        return requestError("the model has no tokenizer");
    if (const std::string pinned = pinnedText(story, settings.memory); !pinned.empty()) {
        if (const int bos = engine::startOfTextToken(info.config); bos >= 0)
            out.pinned.push_back(bos);
        const auto memory = tokenizer->encode(pinned);
        out.pinned.insert(out.pinned.end(), memory.begin(), memory.end());
        const int most = std::min(out.windows.window / kMaxPinnedShare,
                                  out.windows.window - out.windows.overlap - 1);
        if (static_cast<int>(out.pinned.size()) > most)
            return settingsError(
                "the memory is " + std::to_string(out.pinned.size()) +
                " tokens; read in every window it may take at most " + std::to_string(most) +
                " of the window's " + std::to_string(out.windows.window) +
                " tokens. Shorten it, or have it read once (memory layout \"once\")");
    }
    return out;
}

Result<ContinuationPlan> planContinuation(storage::Database& db, const engine::Model& model,
                                          int64_t storyId, const StorySettings& settings,
                                          const std::string& pending) {
    ContinuationPlan plan;
    auto story = db.stories().get(storyId);
    if (!story)
        return storageError(story.error());
    plan.story = std::move(*story);
    auto windows = windowLayout(plan.story, model, settings);
    if (!windows)
        return windows.error();
    plan.windows = windows->windows;
    plan.pinned = std::move(windows->pinned);
    plan.layout = settings.memory;
    const engine::ModelInfo& info = model.info();
    const auto tokenizer = model.tokenizer();

    plan.key = {info.identity, plan.windows.window, plan.windows.overlap,
                static_cast<int>(engine::kStateFormatVersion),
                stateLayout(plan.story, plan.layout)};
    auto point = findResumePoint(db, storyId, plan.key);
    if (!point)
        return point.error();
    plan.point = std::move(*point);

    auto entries = db.lore().list(storyId);
    if (!entries)
        return storageError(entries.error());
    std::string text;
    for (const auto& p : plan.point.path)
        text += p.text;
    text += pending;
    plan.pending = pending;
    const int budget =
        settings.loreBudget > 0 ? settings.loreBudget : std::max(1, plan.windows.window / 4);
    plan.lore = selectLore(*entries, text, *tokenizer, budget);
    return plan;
}

namespace {

// Where each token of `text` comes from: the index of the segment holding its first byte.
std::vector<size_t> segmentOfTokens(const Prompt& prompt, const std::vector<int32_t>& ids,
                                    const engine::Tokenizer& tokenizer) {
    std::vector<size_t> ends; // each segment's end offset
    size_t at = 0;
    for (const auto& s : prompt.segments)
        ends.push_back(at += s.text.size());
    std::vector<size_t> out;
    size_t offset = 0, seg = 0;
    for (int32_t id : ids) {
        while (seg + 1 < ends.size() && offset >= ends[seg])
            ++seg;
        out.push_back(seg);
        offset += tokenizer.tokenBytes(id).size();
    }
    return out;
}

struct Source {
    SegmentKind kind;
    std::string label;
};

} // namespace

Result<ContextView> describeContext(const ContinuationPlan& plan, const engine::Model& model) {
    const auto tokenizer = model.tokenizer();
    if (!tokenizer)
        return requestError("the model has no tokenizer");
    ContextView v;
    v.windows = plan.windows;
    v.layout = plan.layout;
    v.pinnedTokens = static_cast<int>(plan.pinned.size());
    v.memoryTokens = static_cast<int>(tokenizer->encode(memoryPrefix(plan.story)).size());
    v.lore = plan.lore;

    // The open window's stream, token by token, with where each token comes from.
    std::vector<Source> sources;
    struct Slot {
        int32_t token;
        size_t source;
        bool overlap;
    };
    std::vector<Slot> window;
    int64_t windowIndex = 0;
    bool hasState = false;
    Prompt prompt;
    if (plan.point.state) {
        auto summary = engine::summariseState(plan.point.state->blob);
        if (summary) {
            v.resumedFromPassage = plan.point.state->passageId;
            windowIndex = summary->windowIndex;
            hasState = summary->hasState;
            sources.push_back({SegmentKind::Passage, "story so far (from the saved state)"});
            for (int32_t t : summary->windowTokens)
                window.push_back({t, 0, false});
            prompt = plan.promptAfter(v.resumedFromPassage);
        }
    }
    if (v.resumedFromPassage == 0)
        prompt = plan.promptAfter(0);
    const std::string text = prompt.text();
    std::vector<int32_t> ids = tokenizer->encode(text);
    const size_t first = sources.size();
    for (const auto& s : prompt.segments) {
        std::string label;
        switch (s.kind) {
        case SegmentKind::Memory:
            label = "memory (read once)";
            break;
        case SegmentKind::Passage:
            label = s.passageId == 0 ? "your text (not sent yet)" : "story text";
            break;
        case SegmentKind::WorldInfo: {
            label = "world info";
            for (const auto& m : plan.lore.matches)
                if (m.entry.id == s.loreId)
                    label += ": " + m.key;
            break;
        }
        case SegmentKind::AuthorsNote:
            label = "author's note";
            break;
        }
        sources.push_back({s.kind, label});
    }
    std::vector<size_t> of = segmentOfTokens(prompt, ids, *tokenizer);
    for (size_t& i : of)
        i += first;
    // A story read from the beginning starts with start-of-text, unless the windows do.
    const int bos = engine::startOfTextToken(model.info().config);
    if (v.resumedFromPassage == 0 && plan.pinned.empty() && !prompt.segments.empty() && bos >= 0) {
        sources.push_back({SegmentKind::Passage, "start of text"});
        ids.insert(ids.begin(), bos);
        of.insert(of.begin(), sources.size() - 1);
    }
    v.readTokens = static_cast<int>(ids.size());
    const size_t capacity = static_cast<size_t>(plan.windows.window) - plan.pinned.size();
    const size_t keep = static_cast<size_t>(plan.windows.overlap);
    for (size_t i = 0; i < ids.size(); ++i) {
        if (window.size() == capacity) { // rolls over as the generator does
            std::vector<Slot> tail(window.end() - static_cast<std::ptrdiff_t>(keep), window.end());
            for (auto& s : tail)
                s.overlap = true;
            window = std::move(tail);
            ++windowIndex;
            hasState = model.recurrent();
        }
        window.push_back({ids[i], of[i], false});
    }

    v.windowIndex = windowIndex;
    v.hasState = hasState && model.recurrent();
    v.stateFromWindow = v.hasState ? windowIndex - 1 : -1;
    if (!plan.pinned.empty())
        v.spans.push_back({SegmentKind::Memory, "memory (every window)",
                           tokenizer->decode(plan.pinned), v.pinnedTokens, false});
    for (const auto& slot : window) {
        const Source& s = sources[slot.source];
        if (v.spans.empty() || v.spans.back().label != s.label ||
            v.spans.back().overlap != slot.overlap || v.spans.back().kind != s.kind)
            v.spans.push_back({s.kind, s.label, {}, 0, slot.overlap});
        v.spans.back().tokens += 1;
        v.streamTokens.push_back(slot.token);
        v.spans.back().text += tokenizer->tokenBytes(slot.token);
    }
    v.used = static_cast<int>(plan.pinned.size() + window.size());
    v.room = plan.windows.window - v.used;
    return v;
}

} // namespace baton::story
