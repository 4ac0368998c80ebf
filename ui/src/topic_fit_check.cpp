#include "topic_fit_check.h"

#include <baton/engine/topics.h>

#include <algorithm>
#include <map>

namespace baton::ui {

int TopicFitCheck::repeated() const {
    return int(std::count_if(repeats.begin(), repeats.end(), [](int r) { return r >= 0; }));
}

int TopicFitCheck::suggestedTopics() const {
    const int most = std::min(distinct(), vocabulary / kWordsPerTopic);
    return most >= 2 ? most : 0;
}

QString TopicFitCheck::sharedWords() const {
    std::map<int, std::vector<int>> groups; // first topic -> it and the topics repeating it
    for (int t = 0; t < topics; ++t)
        if (repeats[size_t(t)] >= 0)
            groups[repeats[size_t(t)]].push_back(t);
    if (groups.empty())
        return {};
    auto largest = std::max_element(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
        return a.second.size() < b.second.size();
    });
    std::vector<int> members = largest->second;
    members.push_back(largest->first);
    std::map<QString, int> seen;
    QStringList order; // first seen first, for ties
    for (int t : members)
        for (const QString& w : topWords[size_t(t)])
            if (seen[w]++ == 0)
                order << w;
    std::stable_sort(order.begin(), order.end(),
                     [&](const QString& a, const QString& b) { return seen[a] > seen[b]; });
    QStringList shared;
    for (const QString& w : order)
        if (2 * seen[w] > int(members.size()) && shared.size() < 8)
            shared << w;
    return shared.join(QStringLiteral(", "));
}

TopicFitCheck checkTopicModel(const engine::TopicModel& model, int topWords) {
    TopicFitCheck c;
    c.topics = model.topics();
    c.vocabulary = model.vocabularySize();
    const int n = std::max(1, std::min(topWords, c.vocabulary / 2));
    for (int t = 0; t < c.topics; ++t) {
        QStringList words;
        for (const auto& [word, p] : model.topWords(t, n))
            words << QString::fromStdString(word);
        c.topWords.push_back(words);
    }
    const auto shared = [&](int a, int b) {
        int same = 0;
        for (const QString& w : c.topWords[size_t(a)])
            same += c.topWords[size_t(b)].contains(w) ? 1 : 0;
        return same;
    };
    c.repeats.assign(size_t(c.topics), -1);
    for (int t = 1; t < c.topics; ++t)
        for (int u = 0; u < t; ++u)
            if (c.repeats[size_t(u)] < 0 && 2 * shared(t, u) >= n) {
                c.repeats[size_t(t)] = u;
                break;
            }
    return c;
}

} // namespace baton::ui
