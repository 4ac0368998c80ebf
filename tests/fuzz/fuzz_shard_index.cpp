// A sharded checkpoint as the loader opens it (weight_files.h): the index
// (model.safetensors.index.json) and two shard files, given as three parts of one
// input. Refused with an error or opened; the index never leads outside the model's
// folder, and matching the tensors against a small GPT-2 shape never crashes.
#include "fuzz_support.h"

#include "model/weight_files.h"

#include <sys/stat.h>

using namespace baton;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto parts = fuzz::splitParts(fuzz::asText(data, size), 3);
    const std::string folder = fuzz::scratchDir() + "/model";
    ::mkdir(folder.c_str(), 0700);
    fuzz::writeScratch("model/model.safetensors.index.json", parts[0]);
    fuzz::writeScratch("model/model-00001-of-00002.safetensors", parts[1]);
    fuzz::writeScratch("model/model-00002-of-00002.safetensors", parts[2]);
    auto files = engine::openWeightFiles(folder);
    if (!files) {
        fuzz::check(!files.error().message.empty(), "an error says what is wrong");
        return 0;
    }
    for (const auto& f : *files)
        fuzz::check(f.path().rfind(folder + "/", 0) == 0 &&
                        f.path().find('/', folder.size() + 1) == std::string::npos,
                    "every shard is a file of the model's folder");
    engine::ModelConfig config;
    config.nLayer = 1;
    config.nEmbd = 4;
    config.nHead = 1;
    config.nInner = 16;
    config.nPositions = 8;
    config.vocabSize = 10;
    auto matched = engine::matchGpt2Tensors(*files, config);
    if (matched)
        fuzz::check(matched->size() == engine::expectedGpt2Tensors(config).size(),
                    "every expected tensor is found once");
    return 0;
}
