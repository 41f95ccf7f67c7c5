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
#include "causeway/status.h"
#include "causeway/store.h"

namespace causeway::cli {

// Where a local command finds the database: --db, --data-dir, CAUSEWAY_DB,
// or where `causeway serve` keeps it.
struct DbChoice {
  std::string db;
  std::string data_dir;
  std::string Resolve() const {
    if (!db.empty()) return db;
    if (!data_dir.empty()) return data_dir + "/causeway.db";  // never created here: see Existing
    if (const char* env = std::getenv("CAUSEWAY_DB"); env && *env) return env;
    return api::ServeOptions().data_dir + "/causeway.db";
  }
  bool given() const { return !db.empty() || !data_dir.empty(); }
  // Resolve, for a command that loads into the database: --db may name a
  // new file (a first load creates it), but --data-dir must be a directory
  // that exists: a mistyped one is kNotFound (exit 4), never created.
  Result<std::string> ForLoading() const {
    std::error_code ec;
    if (db.empty() && !data_dir.empty() && !std::filesystem::is_directory(data_dir, ec)) {
      return NotFound("--data-dir " + data_dir + " is not a directory: give the server's data directory");
    }
    return Resolve();
  }
  // For a command that only reads a database someone made before: a
  // missing one is kNotFound (exit 4), and nothing is created.
  static Result<std::string> ExistingDb(const std::string& db) {
    if (IsPostgresUrl(db)) return db;
    std::string path = db.rfind("sqlite:", 0) == 0 ? db.substr(7) : db;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      std::string dir = std::filesystem::path(path).parent_path().string();
      bool dir_missing = !dir.empty() && !std::filesystem::is_directory(dir, ec);
      return NotFound("no database at " + path +
                      (dir_missing ? " (there is no directory " + dir + ")" : "") +
                      ": check --db / --data-dir; `causeway serve` or `causeway migrate` creates one");
    }
    return db;
  }
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
