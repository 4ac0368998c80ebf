// A generation's events gathered into progress reports for a reader on another thread
// (the app's editor): the text since the last report (complete UTF-8) and where the
// stream stands, throttled as JobContext::due() paces them (the first at once, then
// about every 50 ms), with nothing of the text lost.
#pragma once

#include "baton/engine/generator.h"
#include "baton/engine/model_queue.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace baton::engine {

struct GenerationProgress {
    std::string text;         // since the previous report
    int64_t generated = 0;    // tokens so far in this job
    int64_t streamLength = 0; // tokens in the whole stream
    int windowFill = 0;       // positions of the open window in use
    int64_t windowIndex = 0;  // windows rolled over before the open one
    double tokensPerSecond = 0;
};

class GenerationStream {
public:
    GenerationStream(JobContext& context, std::function<void(GenerationProgress)> report);
    // For Generator::generate's callback; always true (the generator checks the job's
    // cancel token itself).
    bool onEvent(const GenerationEvent& event);
    // Reports the text not reported yet.
    void finish();

private:
    void flush();
    JobContext& m_context;
    std::function<void(GenerationProgress)> m_report;
    std::chrono::steady_clock::time_point m_start;
    GenerationProgress m_pending;
    GenerationEvent m_last;
};

} // namespace baton::engine
