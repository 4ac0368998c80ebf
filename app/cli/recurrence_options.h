// The recurrence module's design switches, shared by `train` and `probe --synthetic`.
#pragma once

#include "args.h"

#include <baton/engine/model_info.h>

namespace baton::cli {

void addRecurrenceOptions(Args& args);
// The design the options give (the defaults of addRecurrenceOptions for the rest).
engine::RecurrenceConfig recurrenceFromArgs(const Args& args);

} // namespace baton::cli
