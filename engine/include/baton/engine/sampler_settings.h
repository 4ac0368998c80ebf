// Every numeric sampler setting, described once: its key, range, default, the field
// names the APIs send it by, its group and what it does. The engine validates with this
// table; the story settings, baton-cli's flags, the server's field readers and the
// app's Generation panel are made from it. A new sampler touches the sampler, one row
// here and their tests.
#pragma once

#include "baton/engine/sampling.h"

#include <string>
#include <string_view>
#include <vector>

namespace baton::engine {

enum class SettingGroup { Basic, Repetition, Advanced };

struct SamplerSetting {
    const char* key;   // the story settings' JSON key ("min_p"); baton-cli's flag is it
                       // with dashes ("--min-p")
    const char* label; // as the app shows it ("Min-p")
    SettingGroup group;
    const char* help; // one line: what it does, and which value turns it off
    bool integer;     // a whole number (else any number in range)
    double lo, hi;    // the range, inclusive (lo exclusive when loOpen)
    bool loOpen;
    // The field names clients send it by, in every API (KoboldCpp's, OpenAI's,
    // llama.cpp's and text-generation-webui's spellings).
    std::vector<const char*> fields;
    double SamplingOptions::*number = nullptr; // the option it sets (one of the two)
    int SamplingOptions::*whole = nullptr;

    double get(const SamplingOptions& o) const { return number ? o.*number : double(o.*whole); }
    void set(SamplingOptions& o, double v) const {
        if (number)
            o.*number = v;
        else
            o.*whole = int(v);
    }
    // The value SamplingOptions{} has (its default, off for every sampler but the
    // temperature).
    double defaultValue() const { return get(SamplingOptions{}); }
    // Whether v is a value of this setting ("" when it is; else why not).
    std::string check(double v) const;
    std::string flag() const; // "min-p"
};

const std::vector<SamplerSetting>& samplerSettings();
// The setting with this key, or null.
const SamplerSetting* findSamplerSetting(std::string_view key);

const char* settingGroupName(SettingGroup group); // "basic", "repetition", "advanced"

} // namespace baton::engine
