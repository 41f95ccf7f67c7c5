// Commands that work on the database directly rather than through the API
// (imports of large files, reports): where the database is, and who runs
// them for the audit trail.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>

#include "api/server.h"

namespace causeway::cli {

// Where a local command finds the database: --db, --data-dir, CAUSEWAY_DB,
// or where `causeway serve` keeps it.
struct DbChoice {
  std::string db;
  std::string data_dir;
  std::string Resolve() const {
    if (!db.empty()) return db;
    if (!data_dir.empty()) {
      std::error_code ignored;  // OpenStore reports a folder it cannot use
      std::filesystem::create_directories(data_dir, ignored);
      return data_dir + "/causeway.db";
    }
    if (const char* env = std::getenv("CAUSEWAY_DB"); env && *env) return env;
    return api::ServeOptions().data_dir + "/causeway.db";
  }
  bool given() const { return !db.empty() || !data_dir.empty(); }
  void AddTo(CLI::App* cmd) {
    cmd->add_option("--db", db, "SQLite file or postgresql:// URL (env CAUSEWAY_DB)");
    cmd->add_option("--data-dir", data_dir, "use DATA_DIR/causeway.db (default: the server's, .causeway)");
  }
};

// Who runs a local command, for the audit trail: the operating-system user.
inline std::string LocalActor() {
  const char* user = std::getenv("USER");
  if (user && *user) return std::string("local:") + user;
  return "local:uid" + std::to_string(::getuid());
}

}  // namespace causeway::cli
