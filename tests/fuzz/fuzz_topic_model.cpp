// A topic model file (baton-topics JSON, TopicModel::load): refused with an error, or
// a model whose distributions are finite and whose inference on a text works.
#include "fuzz_support.h"

#include <baton/engine/topics.h>

#include <cmath>

using namespace baton;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto model =
        engine::TopicModel::load(fuzz::writeScratch("topics.json", fuzz::asText(data, size)));
    if (!model) {
        fuzz::check(!model.error().message.empty(), "an error says what is wrong");
        return 0;
    }
    fuzz::check(model->topics() > 0 && model->vocabularySize() > 0, "a model has topics and words");
    if (size_t(model->topics()) * size_t(model->vocabularySize()) > 1000000)
        return 0;
    for (int k = 0; k < model->topics(); ++k) {
        double sum = 0;
        for (double p : model->topicWordDistribution(k)) {
            fuzz::check(std::isfinite(p) && p >= 0, "finite probabilities");
            sum += p;
        }
        fuzz::check(std::fabs(sum - 1) < 1e-6, "a topic's words sum to 1");
        (void)model->topWords(k, 5);
    }
    const auto inference = model->infer("the ship sailed past the island in the storm", 5);
    fuzz::check(int(inference.theta.size()) == model->topics(), "theta per topic");
    return 0;
}
