// The sampling options shared by every command that generates text.
#pragma once

#include "args.h"

#include <baton/engine/sampling.h>

namespace baton::cli {

void addSamplingOptions(Args& args);
engine::SamplingOptions samplingFromArgs(const Args& args);

} // namespace baton::cli
