#include "probe/episodes.h"

#include <algorithm>

namespace baton::engine {

namespace {

// The answers (shared by both sets: they are what a question asks for) and the
// subjects, templates and names (disjoint between the sets).
const std::vector<std::string> kColours = {"red",   "blue",  "green", "yellow",
                                           "white", "black", "grey",  "brown"};
const std::vector<std::string> kPlaces = {"cellar", "garden", "kitchen", "library",
                                          "stable", "attic",  "chapel",  "orchard"};
const std::vector<std::string> kTitles = {"Mr.", "Mrs.", "Miss"};

struct Vocabulary {
    std::vector<std::string> names;    // surnames: subjects, and the answers of "name"
    std::vector<std::string> objects;  // what is put somewhere
    std::vector<std::string> garments; // what has a colour
    std::vector<std::string> roles;    // who gives a name
    // Templates with {who} {what} {answer} {role}: fact, then question.
    std::string colourFact, colourQuestion;
    std::string placeFact, placeQuestion;
    std::string nameFact, nameQuestion;
};

const Vocabulary& vocabulary(EpisodeSet set) {
    static const Vocabulary probe = {
        {"Hale", "Crane", "Fenwick", "Oakes", "Lyle", "Marsh", "Tulley", "Brand"},
        {"key", "letter", "ring", "purse"},
        {"coat", "bonnet", "shawl", "gown"},
        {"stranger", "visitor", "traveller"},
        " {who} wore a {answer} {what} that day.",
        " {who}'s {what} was",
        " {who} hid the {what} in the {answer}.",
        " The {what} had been hidden in the",
        " The {role} who called that morning gave the name of {answer}.",
        " The {role} had given the name of"};
    static const Vocabulary training = {{"Dunn", "Pratt", "Rolfe", "Sykes", "Holt", "Kemp", "Vane",
                                         "Webb", "Lacey", "Ford", "Royce", "Tate"},
                                        {"book", "knife", "locket", "map", "candle", "watch"},
                                        {"hat", "cloak", "scarf", "ribbon", "apron", "waistcoat"},
                                        {"servant", "tenant", "curate", "messenger"},
                                        " The {what} that {who} bought was {answer}.",
                                        " The colour of {who}'s {what} was",
                                        " {who} left the {what} in the {answer}.",
                                        " {who} had left the {what} in the",
                                        " A {role} arrived, whose name was {answer}.",
                                        " The name of the {role} was"};
    return set == EpisodeSet::Probe ? probe : training;
}

size_t pick(Rng& rng, size_t n) {
    return static_cast<size_t>(rng.next() % n);
}

std::string fill(std::string text, const std::string& key, const std::string& value) {
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at))
        text.replace(at, key.size(), value), at += value.size();
    return text;
}

// kEpisodeAlternatives distinct items of `pool` in a random order.
std::vector<std::string> choose(const std::vector<std::string>& pool, Rng& rng) {
    std::vector<std::string> items = pool;
    for (size_t i = items.size(); i > 1; --i)
        std::swap(items[i - 1], items[pick(rng, i)]);
    items.resize(std::min<size_t>(items.size(), kEpisodeAlternatives));
    return items;
}

// A position in [lo, hi] after a sentence end of `stream`, or any position there.
int64_t insertionPoint(const std::vector<int32_t>& stream, int64_t lo, int64_t hi,
                       const std::vector<bool>& sentenceEnd, Rng& rng) {
    std::vector<int64_t> candidates;
    for (int64_t p = std::max<int64_t>(lo, 1); p <= hi; ++p) {
        const int32_t previous = stream[size_t(p - 1)];
        if (previous >= 0 && size_t(previous) < sentenceEnd.size() && sentenceEnd[size_t(previous)])
            candidates.push_back(p);
    }
    if (!candidates.empty())
        return candidates[pick(rng, candidates.size())];
    return lo + static_cast<int64_t>(pick(rng, size_t(hi - lo + 1)));
}

} // namespace

Episode makeEpisode(EpisodeSet set, Rng& rng) {
    const Vocabulary& v = vocabulary(set);
    Episode e;
    const std::string who =
        kTitles[pick(rng, kTitles.size())] + " " + v.names[pick(rng, v.names.size())];
    const size_t kind = pick(rng, 3);
    std::string fact, question;
    if (kind == 0) {
        e.kind = "colour";
        e.alternatives = choose(kColours, rng);
        const std::string what = v.garments[pick(rng, v.garments.size())];
        fact = fill(fill(v.colourFact, "{who}", who), "{what}", what);
        question = fill(fill(v.colourQuestion, "{who}", who), "{what}", what);
    } else if (kind == 1) {
        e.kind = "place";
        e.alternatives = choose(kPlaces, rng);
        const std::string what = v.objects[pick(rng, v.objects.size())];
        fact = fill(fill(v.placeFact, "{who}", who), "{what}", what);
        question = fill(fill(v.placeQuestion, "{who}", who), "{what}", what);
    } else {
        e.kind = "name";
        e.alternatives = choose(v.names, rng);
        const std::string role = v.roles[pick(rng, v.roles.size())];
        fact = fill(v.nameFact, "{role}", role);
        question = fill(v.nameQuestion, "{role}", role);
    }
    e.answer = static_cast<int>(pick(rng, e.alternatives.size()));
    e.fact = fill(fact, "{answer}", e.alternatives[size_t(e.answer)]);
    e.question = question;
    for (auto& a : e.alternatives)
        a = " " + a;
    return e;
}

std::vector<bool> sentenceEndTokens(const Tokenizer& tokenizer) {
    std::vector<bool> out(static_cast<size_t>(std::max(0, tokenizer.vocabSize())), false);
    for (size_t id = 0; id < out.size(); ++id) {
        std::string text = tokenizer.decode({static_cast<int32_t>(id)});
        if (text.find('\n') != std::string::npos) {
            out[id] = true;
            continue;
        }
        while (!text.empty() && (text.back() == ' ' || text.back() == '"' || text.back() == '\''))
            text.pop_back();
        out[id] = !text.empty() && (text.back() == '.' || text.back() == '!' || text.back() == '?');
    }
    return out;
}

bool placeEpisode(std::vector<int32_t>& stream, const std::vector<int32_t>& fact,
                  const std::vector<int32_t>& question, int64_t room, int64_t factWindow,
                  int distance, const WindowSettings& w, const std::vector<bool>& sentenceEnd,
                  bool cutAfterQuestion, Rng& rng, PlacedEpisode& placed) {
    const int64_t T = w.window, o = w.overlap, s = T - o;
    const int64_t F = static_cast<int64_t>(fact.size()), Q = static_cast<int64_t>(question.size());
    const size_t originalLength = stream.size();
    // The fact lies in window a and ends before window a + 1 starts.
    const int64_t a = factWindow, b = factWindow + distance;
    // The question sits in the part of window b that window b - 1 does not see.
    const int64_t questionHi = b * s + T - Q - room;
    const int64_t factLo = a * s;
    int64_t factHi = (a + 1) * s - F;
    if (distance == 0) // room for the question after the fact
        factHi = std::min(factHi, questionHi - F);
    if (factHi < factLo || int64_t(stream.size()) < factHi)
        return false;
    const int64_t f = insertionPoint(stream, factLo, factHi, sentenceEnd, rng);
    const int64_t questionLo = std::max(b * s + (b > 0 ? o : 0), f + F);
    if (questionHi < questionLo || int64_t(stream.size()) + F < questionHi)
        return false;
    stream.insert(stream.begin() + f, fact.begin(), fact.end());
    const int64_t q = insertionPoint(stream, questionLo, questionHi, sentenceEnd, rng);
    if (cutAfterQuestion)
        stream.resize(size_t(q));
    stream.insert(stream.begin() + q, question.begin(), question.end());
    if (!cutAfterQuestion)
        stream.resize(originalLength);
    placed.factStart = f;
    placed.factEnd = f + F;
    placed.questionStart = q;
    placed.questionEnd = q + Q;
    return true;
}

void mixEpisodes(std::vector<int32_t>& stream, int perSequence, int bpttWindows,
                 const WindowSettings& windows, const Tokenizer& tokenizer,
                 const std::vector<bool>& sentenceEnd, Rng& rng) {
    if (perSequence < 1 || bpttWindows < 1)
        return;
    const int block = std::max(1, bpttWindows / perSequence);
    for (int start = 0; start + block <= bpttWindows; start += block) {
        const Episode e = makeEpisode(EpisodeSet::Training, rng);
        const int distance = static_cast<int>(pick(rng, size_t(std::min(4, block - 1) + 1)));
        const int64_t factWindow =
            start + static_cast<int64_t>(pick(rng, size_t(block - distance)));
        const auto fact = tokenizer.encode(e.fact);
        const auto asked = tokenizer.encode(e.question + e.alternatives[size_t(e.answer)] + ".");
        PlacedEpisode placed;
        placeEpisode(stream, fact, asked, 0, factWindow, distance, windows, sentenceEnd, false, rng,
                     placed);
    }
}

} // namespace baton::engine
