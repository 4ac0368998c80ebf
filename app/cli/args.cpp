#include "args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>

namespace baton::cli {

namespace {

// Word-wraps text to `width` columns, each line starting with `indent`.
std::string wrap(const std::string& text, size_t width, const std::string& indent) {
    std::istringstream words(text);
    std::string word, line = indent, out;
    while (words >> word) {
        if (line.size() > indent.size() && line.size() + 1 + word.size() > width) {
            out += line + "\n";
            line = indent;
        }
        line += (line.size() > indent.size() ? " " : "") + word;
    }
    return out + line;
}

} // namespace

Args::Args(std::string command, std::string summary)
    : m_command(std::move(command))
    , m_summary(std::move(summary)) {}

Args& Args::flag(const std::string& name, const std::string& help) {
    m_specs.push_back({name, "", help, std::nullopt, true, false});
    return *this;
}

Args& Args::option(const std::string& name, const std::string& valueName, const std::string& help,
                   std::optional<std::string> defaultValue, bool repeatable) {
    m_specs.push_back({name, valueName, help, std::move(defaultValue), false, repeatable});
    return *this;
}

Args& Args::positionals(const std::string& name, const std::string& help, size_t min, size_t max) {
    m_posName = name;
    m_posHelp = help;
    m_posMin = min;
    m_posMax = max;
    return *this;
}

Args& Args::epilog(const std::string& text) {
    m_epilog = text;
    return *this;
}

const Args::Spec& Args::spec(const std::string& name) const {
    for (const auto& s : m_specs)
        if (s.name == name)
            return s;
    throw std::logic_error("undeclared option --" + name);
}

bool Args::parse(const std::vector<std::string>& argv) {
    bool onlyPositional = false;
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (!onlyPositional && (a == "--help" || a == "-h")) {
            std::cout << help();
            return false;
        }
        if (!onlyPositional && a == "--") {
            onlyPositional = true;
            continue;
        }
        if (!onlyPositional && a.size() > 2 && a.compare(0, 2, "--") == 0) {
            std::string name = a.substr(2), value;
            bool inlineValue = false;
            if (const auto eq = name.find('='); eq != std::string::npos) {
                value = name.substr(eq + 1);
                name = name.substr(0, eq);
                inlineValue = true;
            }
            const Spec* s = nullptr;
            for (const auto& candidate : m_specs)
                if (candidate.name == name)
                    s = &candidate;
            if (!s)
                throw UsageError("unknown option --" + name + " (see baton-cli " + m_command +
                                 " --help)");
            if (s->isFlag) {
                if (inlineValue)
                    throw UsageError("--" + name + " takes no value");
                m_values[name].push_back("1");
                continue;
            }
            if (!inlineValue) {
                if (i + 1 >= argv.size())
                    throw UsageError("--" + name + " needs a value (" + s->valueName + ")");
                value = argv[++i];
            }
            if (!s->repeatable && m_values.count(name))
                throw UsageError("--" + name + " is given twice");
            m_values[name].push_back(value);
            continue;
        }
        m_positional.push_back(a);
    }
    if (m_positional.size() < m_posMin)
        throw UsageError(m_posName.empty() ? "missing argument"
                                           : "missing " + m_posName + " (see --help)");
    if (m_positional.size() > m_posMax)
        throw UsageError("unexpected argument '" + m_positional[m_posMax] + "'");
    return true;
}

bool Args::has(const std::string& name) const {
    spec(name);
    return m_values.count(name) > 0;
}

std::string Args::get(const std::string& name) const {
    const Spec& s = spec(name);
    const auto it = m_values.find(name);
    if (it != m_values.end())
        return it->second.back();
    return s.defaultValue.value_or("");
}

std::vector<std::string> Args::all(const std::string& name) const {
    spec(name);
    const auto it = m_values.find(name);
    return it == m_values.end() ? std::vector<std::string>{} : it->second;
}

int64_t Args::getInt(const std::string& name, int64_t min, int64_t max) const {
    const std::string v = get(name);
    errno = 0;
    char* end = nullptr;
    const long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno == ERANGE)
        throw UsageError("--" + name + " must be an integer, not '" + v + "'");
    if (x < min || x > max)
        throw UsageError("--" + name + " must be in [" + std::to_string(min) + ", " +
                         std::to_string(max) + "], not " + v);
    return x;
}

double Args::getDouble(const std::string& name, double min, double max) const {
    const std::string v = get(name);
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(x))
        throw UsageError("--" + name + " must be a number, not '" + v + "'");
    if (x < min || x > max) {
        std::ostringstream s;
        s << "--" << name << " must be in [" << min << ", " << max << "], not " << v;
        throw UsageError(s.str());
    }
    return x;
}

std::vector<std::string> Args::getList(const std::string& name) const {
    std::vector<std::string> out;
    std::stringstream in(get(name));
    std::string item;
    while (std::getline(in, item, ','))
        out.push_back(item);
    if (out.empty())
        throw UsageError("--" + name + " needs at least one value");
    return out;
}

std::vector<int64_t> Args::getIntList(const std::string& name, int64_t min, int64_t max) const {
    std::vector<int64_t> out;
    for (const std::string& item : getList(name)) {
        char* end = nullptr;
        errno = 0;
        const long long x = std::strtoll(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || errno == ERANGE)
            throw UsageError("--" + name + " must be a comma-separated list of integers");
        if (x < min || x > max)
            throw UsageError("--" + name + ": " + item + " is outside [" + std::to_string(min) +
                             ", " + std::to_string(max) + "]");
        out.push_back(x);
    }
    return out;
}

std::string Args::help() const {
    std::ostringstream s;
    s << "Usage: baton-cli " << m_command << " [options]";
    if (!m_posName.empty())
        s << " " << (m_posMin == 0 ? "[" : "") << m_posName << (m_posMax > 1 ? "..." : "")
          << (m_posMin == 0 ? "]" : "");
    s << "\n\n" << wrap(m_summary, 80, "") << "\n";
    if (!m_posName.empty())
        s << "\n  " << m_posName << "\n" << wrap(m_posHelp, 80, "      ") << "\n";
    s << "\nOptions:\n";
    for (const auto& o : m_specs) {
        std::string left = "--" + o.name + (o.isFlag ? "" : " " + o.valueName);
        std::string text = o.help;
        if (o.defaultValue && !o.defaultValue->empty() && text.find("default") == std::string::npos)
            text += " (default: " + *o.defaultValue + ")";
        if (o.repeatable)
            text += " (repeatable)";
        s << "  " << left << "\n" << wrap(text, 80, "      ") << "\n";
    }
    s << "  --help\n      Show this help and exit.\n";
    if (!m_epilog.empty())
        s << "\n" << m_epilog << "\n";
    return s.str();
}

} // namespace baton::cli
