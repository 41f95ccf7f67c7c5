// A real PostgreSQL server for a test process: started on first use with
// scripts/postgres/up.sh (initdb into a temporary folder, loopback only,
// password authentication) and stopped by pid when the process exits.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "store/postgres/pg_conn.h"

namespace causeway::testing {

class PostgresServer {
 public:
  // Null, with the reason in `why`, when PostgreSQL cannot run here.
  static PostgresServer* Get(std::string& why) {
    static PostgresServer* server = Start(why_);
    why = why_;
    return server;
  }
  const std::string& url() const { return url_; }
  const std::string& base() const { return base_; }
  // Stops or starts the server on the same port and data.
  bool Ctl(const std::string& what) const {
    std::string cmd = std::string(CAUSEWAY_SOURCE_DIR) + "/scripts/postgres/ctl.sh " + base_ + " " + what + " >/dev/null 2>&1";
    return std::system(cmd.c_str()) == 0;
  }
  // A URL for database `name` on this server.
  std::string UrlFor(const std::string& name) const { return url_.substr(0, url_.rfind('/') + 1) + name; }

  // Creates an empty database and returns its URL.
  std::string CreateDatabase(const std::string& name) const {
    auto admin = pg::Conn::Open(url_);
    EXPECT_TRUE(admin.ok()) << admin.status().ToString();
    if (!admin.ok()) return "";
    std::string sql = "CREATE DATABASE \"" + name + "\"";
    Status st = (*admin)->ExecScript(sql.c_str());
    EXPECT_TRUE(st.ok()) << st.ToString();
    return UrlFor(name);
  }

 private:
  static PostgresServer* Start(std::string& why) {
    if (std::system("ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1") != 0) {
      why = "PostgreSQL is not installed: run scripts/install-deps.sh test";
      return nullptr;
    }
    auto* s = new PostgresServer();
    s->base_ = (std::filesystem::temp_directory_path() / ("cw-pg-" + std::to_string(::getpid()))).string();
    std::filesystem::remove_all(s->base_);
    std::string up = std::string(CAUSEWAY_SOURCE_DIR) + "/scripts/postgres/up.sh " + s->base_ + " > " + s->base_ +
                     ".log 2>&1";
    if (std::system(up.c_str()) != 0) {
      std::ifstream log(s->base_ + ".log");
      why = "scripts/postgres/up.sh failed: " + std::string(std::istreambuf_iterator<char>(log), {});
      return nullptr;
    }
    std::ifstream env(s->base_ + "/env");
    std::string line;
    while (std::getline(env, line)) {
      const std::string key = "export CAUSEWAY_TEST_PG_URL=";
      if (line.rfind(key, 0) == 0) s->url_ = line.substr(key.size());
    }
    static std::string base = s->base_;
    std::atexit([] {
      std::string down = std::string(CAUSEWAY_SOURCE_DIR) + "/scripts/postgres/down.sh " + base + " >/dev/null 2>&1";
      (void)std::system(down.c_str());
      std::filesystem::remove_all(base);
      std::filesystem::remove(base + ".log");
    });
    return s;
  }
  static inline std::string why_;
  std::string base_;
  std::string url_;
};

}  // namespace causeway::testing
