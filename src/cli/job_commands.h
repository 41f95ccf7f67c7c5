// The commands about jobs: submit, jobs, job, cancel, explain, checkpoint,
// logs and cost job, all clients of the REST API; and what every command
// set up in commands.cc shares (Cli).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "cli/api_client.h"

namespace causeway::cli {

// What every command's callback needs, and the storage of the options it
// reads: a callback runs after the function that set it up has returned, so
// what it parses into is kept here, each value in an allocation of its own
// (references to it stay valid).
struct Cli {
  CLI::App& app;
  Api& api;
  Globals& g;
  int& rc;
  std::vector<std::shared_ptr<void>> kept;

  template <typename T>
  T& Keep(T initial = T()) {
    auto p = std::make_shared<T>(std::move(initial));
    kept.push_back(p);
    return *p;
  }
};

// Pretty JSON on stdout (--json).
void PrintJson(const nlohmann::json& j);

void AddJobCommands(Cli& c);
void AddExplain(Cli& c);
void AddCheckpointsAndLogs(Cli& c);
void AddCostJob(Cli& c);

}  // namespace causeway::cli
