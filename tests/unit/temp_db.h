// A fresh store for a test, on SQLite (a file under the temp directory,
// removed with its WAL files afterwards) or on PostgreSQL (a new database on
// a real server this test process starts with scripts/postgres/up.sh and
// stops by pid when it exits).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "causeway/store.h"
#include "store/postgres/pg_conn.h"

namespace causeway::testing {

// The PostgreSQL server of this test process, started on first use.
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

class TempDb {
 public:
  // `backend`: "sqlite" or "postgresql". Check skip() before use.
  explicit TempDb(const std::string& backend = "sqlite") : backend_(backend) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "-" + info->name();
    for (char& c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    if (backend_ == "postgresql") {
      PostgresServer* server = PostgresServer::Get(skip_);
      if (server) url_ = server->CreateDatabase("t_" + std::to_string(::getpid()) + "_" + std::to_string(++count_));
      return;
    }
    url_ = (std::filesystem::temp_directory_path() / ("cw-" + std::to_string(::getpid()) + "-" + name + ".db")).string();
    Remove();
  }
  ~TempDb() { Remove(); }

  // Why this backend cannot run here; empty when it can.
  const std::string& skip() const { return skip_; }
  // The SQLite path or the PostgreSQL URL.
  const std::string& url() const { return url_; }
  const std::string& path() const { return url_; }

  // Opens (or reopens) the store; fails the test if it cannot.
  std::unique_ptr<Store> Open() const {
    auto s = OpenStore(url_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }

 private:
  void Remove() const {
    if (backend_ != "sqlite") return;
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(url_ + suffix);
  }
  static inline int count_ = 0;
  std::string backend_;
  std::string skip_;
  std::string url_;
};

}  // namespace causeway::testing
