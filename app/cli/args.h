// A small command-line parser: named options with help text, typed and range-checked
// values, positionals, and --help on every command.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace baton::cli {

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class Args {
public:
    Args(std::string command, std::string summary);

    // --name (no value)
    Args& flag(const std::string& name, const std::string& help);
    // --name VALUE; repeatable options collect every value
    Args& option(const std::string& name, const std::string& valueName, const std::string& help,
                 std::optional<std::string> defaultValue = std::nullopt, bool repeatable = false);
    Args& positionals(const std::string& name, const std::string& help, size_t min, size_t max);
    Args& epilog(const std::string& text);

    // Parses argv (after the command name). Returns false when --help was printed.
    // Throws UsageError on bad input.
    bool parse(const std::vector<std::string>& argv);

    bool has(const std::string& name) const;
    std::string get(const std::string& name) const; // the value or the default
    std::vector<std::string> all(const std::string& name) const;
    const std::vector<std::string>& positional() const { return m_positional; }

    int64_t getInt(const std::string& name, int64_t min, int64_t max) const;
    double getDouble(const std::string& name, double min, double max) const;
    // A comma-separated list (at least one item).
    std::vector<std::string> getList(const std::string& name) const;
    // A comma-separated list of integers, each in [min, max].
    std::vector<int64_t> getIntList(const std::string& name, int64_t min, int64_t max) const;

    std::string help() const;

private:
    struct Spec {
        std::string name, valueName, help;
        std::optional<std::string> defaultValue;
        bool isFlag = false, repeatable = false;
    };
    const Spec& spec(const std::string& name) const;

    std::string m_command, m_summary, m_epilog;
    std::vector<Spec> m_specs;
    std::string m_posName, m_posHelp;
    size_t m_posMin = 0, m_posMax = 0;
    std::map<std::string, std::vector<std::string>> m_values;
    std::vector<std::string> m_positional;
};

} // namespace baton::cli
