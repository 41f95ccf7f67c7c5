// What a service's unit test stands on: a fresh store (SQLite file), the
// commit queue every service writes through, a clock the test moves, and
// the embedded estate. No server, no HTTP, no thread but the commit queue's.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <future>
#include <sstream>
#include <memory>
#include <string>
#include <vector>

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/store.h"
#include "identity/tokens.h"
#include "providers/registry.h"
#include "store/commit_queue.h"
#include "store/records_json.h"
#include "unit/temp_db.h"

namespace causeway::testing {

// The text of examples/jobs/NAME.yaml.
inline std::string ExampleSpec(const std::string& name = "eval-sweep") {
  std::ifstream in(std::string(CAUSEWAY_SOURCE_DIR) + "/examples/jobs/" + name + ".yaml");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto e = providers::ParseEstate(DefaultEstateYaml(), "estate.yaml");
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    estate_ = std::make_unique<Estate>(std::move(*e));
    store_ = db_.Open();
    ASSERT_NE(store_, nullptr);
    queue_ = std::make_unique<CommitQueue>(*store_, CommitQueue::Options{});
  }
  void TearDown() override {
    if (queue_) queue_->Stop();
  }

  // An admin service token's principal, as the API would make it.
  static identity::Principal Admin(std::string id = "tok_admin") {
    identity::Principal p;
    p.token_id = std::move(id);
    p.name = "admin";
    p.scopes = {"admin"};
    return p;
  }

  // Every audit event whose action starts with `prefix` ("token." or an exact action).
  std::vector<AuditEvent> Audit(const std::string& prefix) const {
    AuditFilter f;
    f.action = prefix;
    f.limit = 1000;
    auto events = store_->ListAudit(f);
    EXPECT_TRUE(events.ok()) << events.status().ToString();
    return events.ok() ? *events : std::vector<AuditEvent>{};
  }

  // Calls `start` with a callback and waits for the result it is given.
  template <typename T, typename Start>
  static Result<T> Wait(Start start) {
    auto promise = std::make_shared<std::promise<Result<T>>>();
    auto future = promise->get_future();
    start([promise](Result<T> r) { promise->set_value(std::move(r)); });
    return future.get();
  }

  TempDb db_;
  ManualClock clock_;
  std::unique_ptr<Estate> estate_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<CommitQueue> queue_;
};

}  // namespace causeway::testing
