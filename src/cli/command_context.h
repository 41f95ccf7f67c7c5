// What the commands set up in commands.cc and job_commands.cc share.
#pragma once

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "causeway/status.h"
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
inline void PrintJson(const nlohmann::json& j) { std::cout << j.dump(2) << "\n"; }

// Writes `text` to `path` ("" or "-": stdout), as a whole.
Status WriteOut(const std::string& path, const std::string& text);

}  // namespace causeway::cli
