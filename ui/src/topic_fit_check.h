// What a freshly fitted topic model is worth, before the Topics page registers it: the
// top words of each topic, the topics that repeat an earlier topic's top words (half
// or more of them the same: a model that cannot tell its topics apart; LDA with more
// topics than its vocabulary can carry gives topics of two or three words of their own
// padded with the same words that none of them uses, and a table of topics that look
// alike), and whether the vocabulary is small for the number of topics. Pure: the
// page runs it on a worker thread on the saved model.
#pragma once

#include <QString>
#include <QStringList>

#include <vector>

namespace baton::engine {
class TopicModel;
}

namespace baton::ui {

struct TopicFitCheck {
    // About this many vocabulary words per topic give topics with top words of their
    // own; below it the page warns.
    static constexpr int kWordsPerTopic = 10;

    int topics = 0;
    int vocabulary = 0;
    std::vector<QStringList> topWords; // per topic, most probable first
    std::vector<int> repeats;          // per topic: the first topic with the same top words, or -1

    // Topics that repeat an earlier one, and the topics left when they are dropped.
    int repeated() const;
    int distinct() const { return topics - repeated(); }
    bool smallVocabulary() const { return vocabulary < kWordsPerTopic * topics; }
    // The most topics worth asking of this vocabulary (0: too few words for two).
    int suggestedTopics() const;
    // The words most of the largest group of alike topics share, most shared first
    // ("" when no topic repeats another).
    QString sharedWords() const;
};

// Compares each topic's `topWords` most probable words (at most half the vocabulary,
// so that a tiny vocabulary still tells topics apart by what they favour): a topic
// repeats the first earlier topic (itself not a repeat) with which it shares half or
// more of them.
TopicFitCheck checkTopicModel(const engine::TopicModel& model, int topWords = 8);

} // namespace baton::ui
