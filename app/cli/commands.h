// baton-cli's commands. Each parses its own arguments and returns an exit status.
#pragma once

#include <string>
#include <vector>

namespace baton::cli {

int runInfo(const std::vector<std::string>& argv);
int runCache(const std::vector<std::string>& argv);
int runTokenize(const std::vector<std::string>& argv);
int runScore(const std::vector<std::string>& argv);
int runGenerate(const std::vector<std::string>& argv);
int runEval(const std::vector<std::string>& argv);
int runProbe(const std::vector<std::string>& argv);
int runStory(const std::vector<std::string>& argv);
// The global --db PATH (before the command); the story command's own --db wins.
void setDatabasePath(const std::string& path);
int runTrain(const std::vector<std::string>& argv);
int runTopics(const std::vector<std::string>& argv);
int runServe(const std::vector<std::string>& argv);
int runPull(const std::vector<std::string>& argv); // only in builds with the hub module

} // namespace baton::cli
