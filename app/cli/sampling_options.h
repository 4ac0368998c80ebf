// The sampling options shared by every command that generates text.
#pragma once

#include "args.h"

#include <baton/engine/sampling.h>

namespace baton::cli {

void addSamplingOptions(Args& args);
// The options given, the defaults of addSamplingOptions for the rest.
engine::SamplingOptions samplingFromArgs(const Args& args);
// Overrides in `options` only what the command line gives (a story's settings stay
// for the rest).
void applySamplingArgs(const Args& args, engine::SamplingOptions& options);

} // namespace baton::cli
