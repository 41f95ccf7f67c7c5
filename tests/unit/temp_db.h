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
#include "../postgres_server.h"

namespace causeway::testing {

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
