#include "baton/story/context.h"

#include "text_util.h"

#include <baton/engine/generator.h>
#include <baton/storage/lore_store.h>
#include <baton/storage/state_store.h>
#include <baton/storage/story_store.h>

#include <algorithm>
#include <map>
#include <string_view>

namespace baton::story {

Prompt ContinuationPlan::promptAfter(int64_t afterPassage) const {
    return continuationPrompt(story, point.path, afterPassage, layout, lore, pending, recall);
}

const char* loreStateName(LoreState state) {
    switch (state) {
    case LoreState::Read:
        return "read";
    case LoreState::NoKey:
        return "no_key";
    case LoreState::NoSecondKey:
        return "no_secondary_key";
    case LoreState::NoRoom:
        return "no_room";
    case LoreState::TooLong:
        return "too_long";
    }
    return "?";
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
    const int T = out.windows.window, o = out.windows.overlap;
    out.memoryTokens = static_cast<int>(tokenizer->encode(memoryPrefix(story)).size());
    if (const std::string pinned = pinnedText(story, settings.memory); !pinned.empty()) {
        if (const int bos = engine::startOfTextToken(info.config); bos >= 0)
            out.pinned.push_back(bos);
        const auto memory = tokenizer->encode(pinned);
        out.pinned.insert(out.pinned.end(), memory.begin(), memory.end());
        const int most = std::min(T / kMaxPinnedShare, T - o - 1);
        if (static_cast<int>(out.pinned.size()) > most)
            return settingsError(
                "the memory is " + std::to_string(out.pinned.size()) +
                " tokens; read in every window it may take at most " + std::to_string(most) +
                " of the window's " + std::to_string(T) +
                " tokens. Shorten it, or have it read once (memory layout \"once\")");
    }
    // The guidance and the pinned tokens leave an eighth of T (and a token beside the
    // overlap) to new text.
    const int guideRoom =
        T - std::max(T / kMinNewTextShare + o, o + 1) - static_cast<int>(out.pinned.size());
    out.noteTokens = static_cast<int>(tokenizer->encode(authorsNoteText(story)).size());
    if (out.noteTokens > guideRoom)
        return settingsError("the author's note is " + std::to_string(out.noteTokens) +
                             " tokens; beside the memory and the overlap it may take at most " +
                             std::to_string(std::max(0, guideRoom)) + " of the window's " +
                             std::to_string(T) + " tokens. Shorten it, or use a larger window");
    const int left = guideRoom - out.noteTokens;
    const int automatic = std::clamp(
        T / kDefaultStoryShare - static_cast<int>(out.pinned.size()) - out.noteTokens, 0, left);
    out.loreBudget = settings.loreBudget > 0 ? std::min(settings.loreBudget, left) : automatic;
    const int recall = settings.recall.budget > 0 ? settings.recall.budget : T / 4;
    if (!settings.recall.enabled) {
        out.guideBudget = out.loreBudget;
    } else if (settings.loreBudget > 0) {
        out.recallBudget = std::min(recall, left - out.loreBudget);
        out.guideBudget = out.loreBudget + out.recallBudget;
    } else {
        out.recallBudget = std::min(recall, automatic);
        out.guideBudget = automatic;
    }
    return out;
}

int64_t tokensCovering(const std::vector<int32_t>& tokens, size_t bytes,
                       const engine::Tokenizer& tokenizer) {
    size_t covered = 0;
    int64_t n = 0;
    while (covered < bytes && n < static_cast<int64_t>(tokens.size())) {
        covered += tokenizer.tokenBytes(tokens[tokens.size() - 1 - size_t(n)]).size();
        ++n;
    }
    return n;
}

Result<ContinuationPlan> planContinuation(storage::Database& db, const engine::Model& model,
                                          int64_t storyId, const StorySettings& settings,
                                          const std::string& pending) {
    ContinuationPlan plan;
    auto story = db.stories().get(storyId);
    if (!story)
        return storageError(story.error());
    plan.story = std::move(*story);
    auto room = windowLayout(plan.story, model, settings);
    if (!room)
        return room.error();
    plan.room = std::move(*room);
    plan.windows = plan.room.windows;
    plan.pinned = plan.room.pinned;
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
    if (!plan.point.path.empty()) {
        auto states = db.states().onPath(plan.point.leaf(), plan.key.modelIdentity, plan.key.window,
                                         plan.key.overlap, plan.key.formatVersion, plan.key.layout);
        if (!states)
            return storageError(states.error());
        plan.pathStates = std::move(*states);
    }

    auto entries = db.lore().list(storyId);
    if (!entries)
        return storageError(entries.error());
    std::string text;
    for (const auto& p : plan.point.path)
        text += p.text;
    text += pending;
    plan.pending = pending;
    plan.lore = selectLore(*entries, text, *tokenizer, plan.room.loreBudget);
    auto recall = selectRecall(
        db, storyId, plan.point.path, text, settings.recall, plan.windows.window,
        std::min(plan.room.recallBudget, plan.room.guideBudget - plan.lore.tokens), *tokenizer);
    if (!recall)
        return recall.error();
    plan.recall = std::move(*recall);
    for (const auto& e : *entries)
        if (e.enabled && !trimmed(e.content).empty()) {
            LoreCost c;
            c.id = e.id;
            c.tokens = static_cast<int>(tokenizer->encode(loreText(e)).size());
            c.fits = c.tokens <= plan.room.loreBudget;
            c.scanDepth = std::max(1, e.scanDepth);
            const auto fired = std::find_if(plan.lore.matches.begin(), plan.lore.matches.end(),
                                            [&](const LoreMatch& m) { return m.entry.id == e.id; });
            const auto& halfFired = plan.lore.withoutSecondKey;
            if (!c.fits) {
                c.state = LoreState::TooLong;
            } else if (fired != plan.lore.matches.end()) {
                c.state = fired->placed ? LoreState::Read : LoreState::NoRoom;
                c.key = fired->key;
            } else if (auto h = halfFired.find(e.id); h != halfFired.end()) {
                c.state = LoreState::NoSecondKey;
                c.key = h->second;
            }
            plan.loreCosts.push_back(std::move(c));
        }

    // The guidance, each part tokenized on its own (so the parts' counts add up).
    for (const Segment& s : plan.promptAfter(0).guide) {
        const auto ids = tokenizer->encode(s.text);
        plan.guide.insert(plan.guide.end(), ids.begin(), ids.end());
        plan.guideParts.push_back(static_cast<int>(ids.size()));
    }
    // Before an unfinished last sentence, unless that sentence is longer than a quarter
    // of the window (then just before the continuation).
    if (!plan.guide.empty()) {
        const size_t tail = unfinishedTail(text);
        const std::string_view last = std::string_view(text).substr(text.size() - tail);
        if (static_cast<int>(tokenizer->encode(last).size()) <= plan.windows.window / kMaxTailShare)
            plan.tailBytes = tail;
    }
    return plan;
}

namespace {

// Where each token of `ids` (the encoding of `segments`' texts in order) comes from: the
// index of the segment holding its first byte.
std::vector<size_t> segmentOfTokens(const std::vector<Segment>& segments,
                                    const std::vector<int32_t>& ids,
                                    const engine::Tokenizer& tokenizer) {
    std::vector<size_t> ends; // each segment's end offset
    size_t at = 0;
    for (const auto& s : segments)
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

// A token of the open window and where it comes from.
struct Slot {
    int32_t token;
    size_t source;
    bool overlap = false;
    bool carried = false; // the unfinished sentence kept for the guidance's roll-over
};

// The generator's windows, step by step as engine::Generator takes them (reading,
// rolling over, placing the guidance), counting what it reads.
class WindowSim {
public:
    WindowSim(const engine::WindowSettings& w, size_t pinned, bool recurrent)
        : m_w(w)
        , m_pinned(pinned)
        , m_recurrent(recurrent) {}

    // A generator made from a saved state, or a new one.
    void start(std::vector<Slot> window, int64_t index, bool state) {
        m_window = std::move(window);
        m_index = index;
        m_state = state;
        m_read = {};
        m_read.again = static_cast<int>(m_pinned + m_window.size());
        m_checkpoints = {0};
        if (!m_window.empty())
            m_checkpoints.push_back(m_window.size());
    }

    void append(const std::vector<Slot>& slots) {
        size_t i = 0;
        while (i < slots.size()) {
            if (fill() == m_w.window)
                rollover(static_cast<size_t>(m_w.overlap), static_cast<size_t>(m_w.overlap));
            const size_t take =
                std::min(static_cast<size_t>(m_w.window - fill()), slots.size() - i);
            m_window.insert(m_window.end(), slots.begin() + static_cast<std::ptrdiff_t>(i),
                            slots.begin() + static_cast<std::ptrdiff_t>(i + take));
            m_read.text += static_cast<int>(take);
            m_checkpoints.push_back(m_window.size());
            i += take;
        }
    }

    // Generator::setGuide on a window with no guidance placed yet.
    void placeGuide(int64_t guide, int64_t beforeLast) {
        const auto place =
            engine::placeGuidance(m_w, static_cast<int64_t>(m_pinned),
                                  static_cast<int64_t>(m_window.size()), guide, beforeLast);
        if (place.rollsOver) {
            // The new window keeps the overlap before the guidance's place, then the
            // unfinished sentence after it.
            rollover(static_cast<size_t>(place.keep), static_cast<size_t>(place.at));
            m_read.guide += static_cast<int>(guide);
        } else {
            size_t cp = 0;
            for (size_t c : m_checkpoints)
                if (c <= static_cast<size_t>(place.at))
                    cp = std::max(cp, c);
            m_read.guide += static_cast<int>(m_window.size() - cp + guide);
        }
        m_guideAt = place.at;
        m_guide = guide;
    }

    int fill() const {
        return static_cast<int>(m_pinned + m_window.size() + static_cast<size_t>(m_guide));
    }
    const std::vector<Slot>& window() const { return m_window; }
    int64_t index() const { return m_index; }
    bool state() const { return m_state; }
    const ReadTokens& read() const { return m_read; }
    int64_t guideAt() const { return m_guideAt; }

private:
    // A new window keeps the last `keep` tokens, the first `overlap` of them the overlap
    // and the rest the unfinished sentence carried for the guidance.
    void rollover(size_t keep, size_t overlap) {
        keep = std::min(keep, m_window.size());
        std::vector<Slot> tail(m_window.end() - static_cast<std::ptrdiff_t>(keep), m_window.end());
        for (size_t i = 0; i < tail.size(); ++i) {
            tail[i].overlap = i < overlap;
            tail[i].carried = i >= overlap;
        }
        m_window = std::move(tail);
        ++m_index;
        m_state = m_recurrent;
        m_guide = 0;
        m_guideAt = -1;
        m_read.atRollover += static_cast<int>(m_pinned + keep);
        ++m_read.rollovers;
        m_checkpoints = {0};
        if (keep > 0)
            m_checkpoints.push_back(keep);
    }

    engine::WindowSettings m_w;
    size_t m_pinned;
    bool m_recurrent;
    std::vector<Slot> m_window;
    std::vector<size_t> m_checkpoints;
    int64_t m_index = 0;
    bool m_state = false;
    ReadTokens m_read;
    int64_t m_guide = 0;
    int64_t m_guideAt = -1;
};

std::string labelOf(const Segment& s, const LoreSelection& lore, const RecallSelection& recall) {
    switch (s.kind) {
    case SegmentKind::Memory:
        return "memory (read once)";
    case SegmentKind::Passage:
        return s.passageId == 0 ? "your text (not sent yet)" : "story text";
    case SegmentKind::WorldInfo: {
        std::string label = "world info";
        for (const auto& m : lore.matches)
            if (m.entry.id == s.loreId)
                label += ": " + m.key;
        return label;
    }
    case SegmentKind::AuthorsNote:
        return "author's note";
    case SegmentKind::Recalled: {
        std::string label = "recalled";
        for (const auto& c : recall.chunks)
            if (c.placed && c.passageId == s.passageId && recallText(c) == s.text) {
                std::string words;
                for (const auto& w : c.matched)
                    words += (words.empty() ? "" : ", ") + w;
                if (!words.empty())
                    label += ": " + words;
                break;
            }
        return label;
    }
    }
    return {};
}

// ContextView::windowStarts.
std::vector<int64_t> windowStarts(const ContinuationPlan& plan, int64_t open,
                                  const std::vector<Slot>& window,
                                  const engine::Tokenizer& tokenizer) {
    std::string text;
    std::map<int64_t, int64_t> endOf; // passage -> the byte offset of its end
    for (const auto& p : plan.point.path)
        endOf[p.id] = static_cast<int64_t>((text += p.text).size());
    text += plan.pending;
    const auto size = static_cast<int64_t>(text.size());
    std::vector<int32_t> ids;
    for (const auto& s : window)
        ids.push_back(s.token);
    const int64_t openStart =
        std::max<int64_t>(0, size - static_cast<int64_t>(tokenizer.decode(ids).size()));
    // Known: window w + 1 begins where the deepest passage saved in window w ends.
    std::vector<int64_t> starts(static_cast<size_t>(open + 1), -1);
    starts[0] = 0;
    starts[static_cast<size_t>(open)] = openStart;
    for (const auto& st : plan.pathStates) {
        const int64_t next = st.windowIndex + 1;
        const auto end = endOf.find(st.passageId);
        if (next <= 0 || next >= open || end == endOf.end())
            continue;
        starts[static_cast<size_t>(next)] =
            std::max(starts[static_cast<size_t>(next)], end->second);
    }
    // Unknown: a stride of the text on from the one before, never past the next known.
    const int64_t stride = std::max<int64_t>(1, plan.windows.window - plan.windows.overlap -
                                                    static_cast<int64_t>(plan.pinned.size()));
    for (size_t w = 1; w < starts.size(); ++w) {
        int64_t next = -1;
        for (size_t k = w; k < starts.size() && next < 0; ++k)
            next = starts[k];
        if (starts[w] < 0) {
            const std::string_view rest =
                std::string_view(text).substr(static_cast<size_t>(starts[w - 1]));
            const auto more = tokenizer.encode(rest.substr(0, static_cast<size_t>(stride) * 8));
            const size_t n = std::min(more.size(), static_cast<size_t>(stride));
            starts[w] =
                starts[w - 1] +
                static_cast<int64_t>(
                    tokenizer.decode({more.begin(), more.begin() + static_cast<std::ptrdiff_t>(n)})
                        .size());
        }
        starts[w] = std::clamp(starts[w], starts[w - 1], std::max(starts[w - 1], next));
    }
    return starts;
}

} // namespace

int64_t windowAt(const ContextView& view, int64_t offset) {
    const auto& s = view.windowStarts;
    const auto after = std::upper_bound(s.begin(), s.end(), offset);
    return after == s.begin() ? 0 : static_cast<int64_t>(after - s.begin()) - 1;
}

Result<ContextView> describeContext(const ContinuationPlan& plan, const engine::Model& model) {
    const auto tokenizer = model.tokenizer();
    if (!tokenizer)
        return requestError("the model has no tokenizer");
    ContextView v;
    v.windows = plan.windows;
    v.layout = plan.layout;
    v.pinnedTokens = static_cast<int>(plan.pinned.size());
    v.memoryTokens = plan.room.memoryTokens;
    v.noteTokens = plan.room.noteTokens;
    v.lore = plan.lore;
    v.recall = plan.recall;

    std::vector<Source> sources;
    WindowSim sim(plan.windows, plan.pinned.size(), model.recurrent());
    Prompt prompt;
    if (plan.point.state) {
        auto summary = engine::summariseState(plan.point.state->blob);
        if (summary) {
            v.resumedFromPassage = plan.point.state->passageId;
            sources.push_back({SegmentKind::Passage, "story so far (from the saved state)"});
            std::vector<Slot> window;
            for (int32_t t : summary->windowTokens)
                window.push_back({t, 0, false});
            sim.start(std::move(window), summary->windowIndex, summary->hasState);
            prompt = plan.promptAfter(v.resumedFromPassage);
        }
    }
    if (v.resumedFromPassage == 0) {
        prompt = plan.promptAfter(0);
        sim.start({}, 0, false);
    }

    // What is read: the text before the unfinished sentence, then that sentence (two
    // reads, as continueStory makes them), with where each token comes from.
    for (const auto& s : prompt.segments)
        sources.push_back({s.kind, labelOf(s, plan.lore, plan.recall)});
    const size_t firstText = v.resumedFromPassage ? 1 : 0;
    const std::string text = prompt.text();
    const bool split = !plan.guide.empty() && plan.tailBytes <= text.size();
    const size_t cut = split ? text.size() - plan.tailBytes : text.size();
    std::vector<int32_t> ids = tokenizer->encode(std::string_view(text).substr(0, cut));
    const std::vector<int32_t> tail =
        split ? tokenizer->encode(std::string_view(text).substr(cut)) : std::vector<int32_t>();
    std::vector<int32_t> all = ids;
    all.insert(all.end(), tail.begin(), tail.end());
    std::vector<size_t> of = segmentOfTokens(prompt.segments, all, *tokenizer);
    for (size_t& i : of)
        i += firstText;
    std::vector<Slot> slots;
    // A story read from the beginning starts with start-of-text, unless the windows do.
    const int bos = engine::startOfTextToken(model.info().config);
    if (v.resumedFromPassage == 0 && plan.pinned.empty() && !prompt.segments.empty() && bos >= 0) {
        sources.push_back({SegmentKind::Passage, "start of text"});
        sim.append({{bos, sources.size() - 1, false}});
    }
    for (size_t i = 0; i < all.size(); ++i)
        slots.push_back({all[i], of[i], false});
    sim.append({slots.begin(), slots.begin() + static_cast<std::ptrdiff_t>(ids.size())});
    sim.append({slots.begin() + static_cast<std::ptrdiff_t>(ids.size()), slots.end()});

    // The guidance: before the unfinished sentence (an empty stream starts first, as the
    // generator starts it).
    if (const int start = engine::emptyStartToken(model.info().config);
        !plan.guide.empty() && sim.window().empty() && v.resumedFromPassage == 0 &&
        plan.pinned.empty() && start >= 0) {
        sources.push_back({SegmentKind::Passage, "start of text"});
        sim.append({{start, sources.size() - 1, false}});
    }
    if (!plan.guide.empty()) {
        std::vector<int32_t> windowTokens;
        for (const auto& s : sim.window())
            windowTokens.push_back(s.token);
        const int64_t before = split ? static_cast<int64_t>(tail.size())
                                     : tokensCovering(windowTokens, plan.tailBytes, *tokenizer);
        sim.placeGuide(static_cast<int64_t>(plan.guide.size()), before);
    }

    v.read = sim.read();
    v.readTokens = v.read.total();
    v.windowIndex = sim.index();
    v.hasState = sim.state() && model.recurrent();
    v.stateFromWindow = v.hasState ? v.windowIndex - 1 : -1;
    v.guideTokens = plan.guide.empty() ? 0 : static_cast<int>(plan.guide.size());
    if (!plan.pinned.empty())
        v.spans.push_back({SegmentKind::Memory, "memory (every window)",
                           tokenizer->decode(plan.pinned), v.pinnedTokens, false});
    auto add = [&](SegmentKind kind, const std::string& label, int32_t token, bool overlap,
                   bool carried) {
        if (v.spans.empty() || v.spans.back().label != label || v.spans.back().overlap != overlap ||
            v.spans.back().carried != carried || v.spans.back().kind != kind)
            v.spans.push_back({kind, label, {}, 0, overlap, carried});
        v.spans.back().tokens += 1;
        v.spans.back().text += tokenizer->tokenBytes(token);
    };
    auto addGuide = [&] {
        size_t at = 0;
        for (size_t part = 0; part < prompt.guide.size(); ++part) {
            const std::string label = labelOf(prompt.guide[part], plan.lore, plan.recall);
            for (int i = 0; i < plan.guideParts[part]; ++i)
                add(prompt.guide[part].kind, label, plan.guide[at++], false, false);
        }
    };
    const auto& window = sim.window();
    for (size_t i = 0; i < window.size(); ++i) {
        if (sim.guideAt() == static_cast<int64_t>(i))
            addGuide();
        const Source& s = sources[window[i].source];
        add(s.kind, s.label, window[i].token, window[i].overlap, window[i].carried);
        v.streamTokens.push_back(window[i].token);
    }
    if (sim.guideAt() == static_cast<int64_t>(window.size()))
        addGuide();
    v.used = sim.fill();
    v.room = plan.windows.window - v.used;

    v.loreCosts = plan.loreCosts;
    v.windowStarts = windowStarts(plan, v.windowIndex, sim.window(), *tokenizer);
    return v;
}

} // namespace baton::story
