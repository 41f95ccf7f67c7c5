// A SQLite store on a fresh file under the temp directory, removed (with its
// WAL files) when the test ends.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "causeway/store.h"

namespace causeway::testing {

class TempDb {
 public:
  TempDb() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = (std::filesystem::temp_directory_path() /
             ("cw-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "-" + info->name() + ".db"))
                .string();
    Remove();
  }
  ~TempDb() { Remove(); }

  const std::string& path() const { return path_; }

  // Opens (or reopens) the store; fails the test if it cannot.
  std::unique_ptr<Store> Open() const {
    auto s = OpenSqliteStore(path_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }

 private:
  void Remove() const {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + suffix);
  }
  std::string path_;
};

}  // namespace causeway::testing
