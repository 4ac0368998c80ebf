// The model a run trains: a new one (its SentencePiece tokenizer trained on the
// corpus first) or a base model loaded, with the recurrence module added (fresh,
// seeded) or continued, or dropped for a baseline run.
#pragma once

#include "baton/engine/model.h"
#include "baton/engine/training.h"

#include <functional>
#include <memory>
#include <string>

namespace baton::engine {

struct TrainingModel {
    std::shared_ptr<Model> model;
    std::string tokenizerDir; // the run's copy of the tokenizer files
    std::string baseIdentity; // the base model's identity (an adapter run's base)
};

Result<TrainingModel> setUpModel(const TrainConfig& config,
                                 const std::function<void(const std::string&)>& info);

} // namespace baton::engine
