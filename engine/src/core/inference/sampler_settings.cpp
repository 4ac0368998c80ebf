#include "baton/engine/sampler_settings.h"

#include <cmath>
#include <sstream>

namespace baton::engine {

namespace {

using O = SamplingOptions;

SamplerSetting number(const char* key, const char* label, SettingGroup group, const char* help,
                      double lo, double hi, std::vector<const char*> fields, double O::*member,
                      bool loOpen = false) {
    return {key, label, group, help, false, lo, hi, loOpen, std::move(fields), member, nullptr};
}

SamplerSetting whole(const char* key, const char* label, SettingGroup group, const char* help,
                     double lo, double hi, std::vector<const char*> fields, int O::*member) {
    return {key, label, group, help, true, lo, hi, false, std::move(fields), nullptr, member};
}

std::string shown(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

} // namespace

const std::vector<SamplerSetting>& samplerSettings() {
    using G = SettingGroup;
    static const std::vector<SamplerSetting> table = {
        number("temperature", "Temperature", G::Basic,
               "How much risk to take: 0 always takes the likeliest token; 1 samples as the "
               "model predicts; higher flattens the distribution",
               0, 10, {"temperature"}, &O::temperature),
        whole("top_k", "Top-k", G::Basic, "Sample among the k likeliest tokens (0: all)", 0,
              1 << 24, {"top_k"}, &O::topK),
        number("top_p", "Top-p", G::Basic,
               "Sample from the smallest set of likeliest tokens holding this much of the "
               "probability (1: all)",
               0, 1, {"top_p"}, &O::topP, true),
        number("min_p", "Min-p", G::Basic,
               "Drop tokens less likely than this share of the likeliest one (0: off; 0.05-0.1 "
               "keeps small models on track at higher temperatures)",
               0, 1, {"min_p"}, &O::minP),
        number("repetition_penalty", "Repetition penalty", G::Repetition,
               "Make tokens already in the window less likely, CTRL-style (1: off)", 1, 10,
               {"repetition_penalty", "rep_pen", "repeat_penalty"}, &O::repetitionPenalty),
        whole("repetition_range", "Penalty range", G::Repetition,
              "How many recent tokens the repetition, presence and frequency penalties see (0: "
              "the whole window)",
              0, 1 << 20, {"repetition_penalty_range", "rep_pen_range", "repeat_last_n"},
              &O::repetitionRange),
        number("presence_penalty", "Presence penalty", G::Repetition,
               "Subtract this from the logit of every token already seen (OpenAI's; 0: off)", -2, 2,
               {"presence_penalty"}, &O::presencePenalty),
        number("frequency_penalty", "Frequency penalty", G::Repetition,
               "Subtract this from a token's logit for every time it was seen (OpenAI's; 0: off)",
               -2, 2, {"frequency_penalty"}, &O::frequencyPenalty),
        number("dry_multiplier", "DRY multiplier", G::Repetition,
               "Penalise the token that would extend a repeat of earlier text, more the longer "
               "the repeat (Don't Repeat Yourself; 0: off, 0.8 is usual)",
               0, 100, {"dry_multiplier"}, &O::dryMultiplier),
        number("dry_base", "DRY base", G::Repetition,
               "How fast DRY's penalty grows with the repeat's length", 1, 10, {"dry_base"},
               &O::dryBase),
        whole("dry_allowed_length", "DRY allowed length", G::Repetition,
              "The longest repeat DRY leaves alone, in tokens", 1, 1000, {"dry_allowed_length"},
              &O::dryAllowedLength),
        whole("dry_range", "DRY range", G::Repetition,
              "How many recent tokens DRY looks for repeats in (0: the whole window)", 0, 1 << 20,
              {"dry_penalty_last_n", "dry_range"}, &O::dryRange),
        number("typical_p", "Typical-p", G::Advanced,
               "Keep the tokens whose surprise is closest to the average until this much "
               "probability (locally typical sampling; 1: off)",
               0, 1, {"typical_p", "typical"}, &O::typicalP, true),
        number("tfs", "Tail-free", G::Advanced,
               "Cut the tail where the sorted probabilities stop curving (tail-free sampling's "
               "z; 1: off)",
               0, 1, {"tfs", "tfs_z"}, &O::tailFree, true),
        number("top_a", "Top-a", G::Advanced,
               "Drop tokens less likely than this times the square of the likeliest one's "
               "probability (0: off)",
               0, 1, {"top_a"}, &O::topA),
        number("top_n_sigma", "Top-n-sigma", G::Advanced,
               "Keep tokens whose logit is within n standard deviations of the best (0: off)", 0,
               100, {"top_n_sigma", "nsigma"}, &O::topNSigma),
        number("xtc_threshold", "XTC threshold", G::Advanced,
               "XTC: tokens at least this likely count as the obvious choices", 0, 1,
               {"xtc_threshold"}, &O::xtcThreshold),
        number("xtc_probability", "XTC probability", G::Advanced,
               "How often XTC removes every obvious choice but the least likely of them (0: off)",
               0, 1, {"xtc_probability"}, &O::xtcProbability),
        number("dynatemp_range", "Dynamic temperature", G::Advanced,
               "Vary the temperature by up to this much around it: higher where the model is "
               "unsure, lower where it is sure (0: off)",
               0, 10, {"dynatemp_range"}, &O::dynatempRange),
        number("dynatemp_exponent", "Dynamic exponent", G::Advanced,
               "How the dynamic temperature follows the uncertainty (1: linearly)", 0.01, 10,
               {"dynatemp_exponent"}, &O::dynatempExponent),
        whole("temperature_last", "Temperature last", G::Advanced,
              "1: apply the temperature after the truncations, as llama.cpp and KoboldCpp do "
              "(0: before them)",
              0, 1, {"temperature_last"}, &O::temperatureLast),
        whole("mirostat", "Mirostat", G::Advanced,
              "2: Mirostat v2, which keeps the text's surprise near tau and replaces the "
              "truncations (0: off)",
              0, 2, {"mirostat", "mirostat_mode"}, &O::mirostat),
        number("mirostat_tau", "Mirostat tau", G::Advanced,
               "The surprise Mirostat aims at, in bits per token", 0, 20, {"mirostat_tau"},
               &O::mirostatTau),
        number("mirostat_eta", "Mirostat eta", G::Advanced, "How fast Mirostat corrects itself", 0,
               1, {"mirostat_eta"}, &O::mirostatEta),
    };
    return table;
}

const SamplerSetting* findSamplerSetting(std::string_view key) {
    for (const SamplerSetting& s : samplerSettings())
        if (key == s.key)
            return &s;
    return nullptr;
}

std::string SamplerSetting::check(double v) const {
    const std::string range = std::string(loOpen ? "(" : "[") + shown(lo) + ", " + shown(hi) + "]";
    if (!std::isfinite(v) || v > hi || (loOpen ? v <= lo : v < lo))
        return std::string(key) + " must be in " + range + ", not " + shown(v);
    if (integer && v != std::floor(v))
        return std::string(key) + " must be a whole number, not " + shown(v);
    if (whole == &O::mirostat && v == 1)
        return "mirostat must be 0 (off) or 2 (Mirostat v2; version 1 is not offered)";
    return {};
}

std::string SamplerSetting::flag() const {
    std::string f = key;
    for (char& c : f)
        if (c == '_')
            c = '-';
    return f;
}

const char* settingGroupName(SettingGroup group) {
    switch (group) {
    case SettingGroup::Basic:
        return "basic";
    case SettingGroup::Repetition:
        return "repetition";
    default:
        return "advanced";
    }
}

} // namespace baton::engine
