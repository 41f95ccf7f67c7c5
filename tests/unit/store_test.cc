#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

#include "audit/chain.h"
#include "causeway/ids.h"
#include "causeway/store.h"
#include "temp_db.h"

namespace causeway {
namespace {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }
  void TearDown() override { store_.reset(); }
  void Reopen() {
    store_.reset();
    store_ = db_.Open();
  }

  JobRecord Job(const std::string& team = "nlp") {
    JobRecord j;
    j.id = NewId("job", clock_.Now());
    j.name = "j";
    j.team = team;
    j.owner = "alice";
    j.spec_yaml = "run: x";
    j.spec_json = "{}";
    j.submitted_by = "tok_x";
    j.created_at = j.updated_at = clock_.Now();
    clock_.Advance(Micros(1000));
    return j;
  }

  static AuditEvent Event(const std::string& action, const std::string& resource) {
    AuditEvent e;
    e.actor = "tok_x";
    e.action = action;
    e.resource = resource;
    e.details = {{"k", "v"}};
    return e;
  }

  WriteFn InsertWithAudit(const JobRecord& job) {
    return [job](WriteTx& tx) -> Status {
      RETURN_IF_ERROR(tx.InsertJob(job));
      AuditEvent e = Event("job.submit", "job/" + job.id);
      e.time = job.created_at;
      return tx.AppendAudit(e);
    };
  }

  audit::VerifyReport Verify() {
    audit::ChainVerifier v;
    EXPECT_TRUE(store_->ScanAudit([&](const AuditEvent& e) { return v.Add(e); }).ok());
    auto head = store_->GetAuditHead();
    EXPECT_TRUE(head.ok());
    return v.Finish(*head);
  }

  ManualClock clock_;
  testing::TempDb db_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreTest, WritesAndReadsBack) {
  JobRecord j = Job();
  ASSERT_TRUE(store_->Write(InsertWithAudit(j)).ok());
  auto got = store_->GetJob(j.id);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->team, "nlp");
  EXPECT_EQ((*got)->created_at, j.created_at);
  EXPECT_FALSE(store_->GetJob("job_missing")->has_value());
}

TEST_F(StoreTest, AFailingUnitIsRolledBackAndTheOthersCommit) {
  JobRecord a = Job(), b = Job();
  WriteFn ok1 = InsertWithAudit(a);
  WriteFn bad = [](WriteTx& tx) -> Status {
    JobRecord j;
    j.id = "job_will_vanish";
    RETURN_IF_ERROR(tx.InsertJob(j));
    AuditEvent e = Event("job.submit", "job/job_will_vanish");
    RETURN_IF_ERROR(tx.AppendAudit(e));
    return InvalidArgument("changed my mind");
  };
  WriteFn ok2 = InsertWithAudit(b);
  auto results = store_->WriteBatch({&ok1, &bad, &ok2});
  EXPECT_TRUE(results[0].ok());
  EXPECT_EQ(results[1].code(), Code::kInvalidArgument);
  EXPECT_TRUE(results[2].ok());
  EXPECT_TRUE(store_->GetJob(a.id)->has_value());
  EXPECT_FALSE(store_->GetJob("job_will_vanish")->has_value());
  EXPECT_TRUE(store_->GetJob(b.id)->has_value());
  // The rolled-back unit's audit event left no gap in the chain.
  auto events = store_->ListAudit({});
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[1].seq, 2);
  EXPECT_TRUE(Verify().ok);
}

TEST_F(StoreTest, AStateChangeWithoutAnAuditEventIsRefused) {
  JobRecord j = Job();
  Status st = store_->Write([&](WriteTx& tx) { return tx.InsertJob(j); });
  EXPECT_EQ(st.code(), Code::kInternal);
  EXPECT_NE(st.message().find("audit"), std::string::npos);
  EXPECT_FALSE(store_->GetJob(j.id)->has_value());
}

TEST_F(StoreTest, DuplicateIdIsAlreadyExists) {
  JobRecord j = Job();
  ASSERT_TRUE(store_->Write(InsertWithAudit(j)).ok());
  EXPECT_EQ(store_->Write(InsertWithAudit(j)).code(), Code::kAlreadyExists);
}

TEST_F(StoreTest, ChainSurvivesReopenAndContinues) {
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(store_->Write(InsertWithAudit(Job())).ok());
  Reopen();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(store_->Write(InsertWithAudit(Job())).ok());
  auto report = Verify();
  EXPECT_TRUE(report.ok) << report.reason;
  EXPECT_EQ(report.events, 10);
  EXPECT_EQ(store_->GetAuditHead()->seq, 10);
}

TEST_F(StoreTest, ListJobsFiltersAndPagesNewestFirst) {
  std::vector<std::string> nlp;
  for (int i = 0; i < 5; ++i) {
    JobRecord j = Job(i % 2 ? "vision" : "nlp");
    if (j.team == "nlp") nlp.push_back(j.id);
    ASSERT_TRUE(store_->Write(InsertWithAudit(j)).ok());
  }
  JobFilter f;
  f.team = "nlp";
  f.limit = 2;
  auto page1 = store_->ListJobs(f);
  ASSERT_EQ(page1->size(), 2u);
  EXPECT_EQ((*page1)[0].id, nlp[2]);
  EXPECT_EQ((*page1)[1].id, nlp[1]);
  f.before_id = page1->back().id;
  auto page2 = store_->ListJobs(f);
  ASSERT_EQ(page2->size(), 1u);
  EXPECT_EQ((*page2)[0].id, nlp[0]);
  JobFilter by_state;
  by_state.state = JobState::kCancelled;
  EXPECT_TRUE(store_->ListJobs(by_state)->empty());
}

TEST_F(StoreTest, IdempotencyTokensAndStateUpdates) {
  JobRecord j = Job();
  ASSERT_TRUE(store_->Write([&](WriteTx& tx) -> Status {
    RETURN_IF_ERROR(tx.InsertJob(j));
    RETURN_IF_ERROR(tx.PutIdempotency({"tok_x", "k1", "h", j.id, j.created_at}));
    RETURN_IF_ERROR(tx.UpdateJobState(j.id, JobState::kCancelled, j.created_at));
    RETURN_IF_ERROR(tx.AddJobEvent({0, j.id, j.created_at, "cancelled", "by test"}));
    TokenRecord t;
    t.id = "tok_1";
    t.name = "t";
    t.hash = "abc";
    t.scopes = {"jobs:read"};
    t.created_at = j.created_at;
    RETURN_IF_ERROR(tx.InsertToken(t));
    RETURN_IF_ERROR(tx.RevokeToken("tok_1", j.created_at));
    AuditEvent e = Event("test", "job/" + j.id);
    return tx.AppendAudit(e);
  }).ok());
  Status probe = store_->Write([&](WriteTx& tx) -> Status {
    auto rec = tx.GetIdempotency("tok_x", "k1");
    EXPECT_TRUE(rec.ok() && rec->has_value());
    EXPECT_EQ((*rec)->job_id, j.id);
    EXPECT_FALSE(tx.GetIdempotency("tok_other", "k1")->has_value());
    EXPECT_EQ(tx.UpdateJobState("job_nope", JobState::kFailed, j.created_at).code(), Code::kNotFound);
    return Status::Ok();
  });
  EXPECT_TRUE(probe.ok());
  EXPECT_EQ((*store_->GetJob(j.id))->state, JobState::kCancelled);
  EXPECT_EQ(store_->ListJobEvents(j.id)->size(), 1u);
  auto tok = store_->FindTokenByHash("abc");
  ASSERT_TRUE(tok->has_value());
  EXPECT_TRUE((*tok)->revoked_at.has_value());
  EXPECT_EQ((*tok)->scopes, std::vector<std::string>{"jobs:read"});
}

TEST_F(StoreTest, AuditFilters) {
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(store_->Write(InsertWithAudit(Job())).ok());
  AuditFilter f;
  f.action = "job.";
  EXPECT_EQ(store_->ListAudit(f)->size(), 3u);
  f.action = "job.sub";  // a prefix must end in '.'
  EXPECT_EQ(store_->ListAudit(f)->size(), 0u);
  AuditFilter after;
  after.after_seq = 2;
  EXPECT_EQ(store_->ListAudit(after)->size(), 1u);
}

TEST_F(StoreTest, ReadOnlyOpenRefusesWritesAndMissingFilesFail) {
  ASSERT_TRUE(store_->Write(InsertWithAudit(Job())).ok());
  auto ro = OpenSqliteStore(db_.path(), SqliteOptions{.read_only = true});
  ASSERT_TRUE(ro.ok()) << ro.status().ToString();
  EXPECT_EQ((*ro)->Write(InsertWithAudit(Job())).code(), Code::kFailedPrecondition);
  EXPECT_FALSE(OpenSqliteStore(db_.path() + ".missing", SqliteOptions{.read_only = true}).ok());
}

// The verifier on its own: every kind of tampering is named at the first bad
// sequence number.
TEST(ChainVerifierTest, NamesTheFirstBadEvent) {
  std::vector<AuditEvent> chain;
  std::string prev = audit::kGenesisHash;
  for (int i = 1; i <= 5; ++i) {
    AuditEvent e;
    e.seq = i;
    e.time = FromUnixMicros(i);
    e.actor = "a";
    e.action = "x";
    e.resource = "r/" + std::to_string(i);
    e.prev_hash = prev;
    e.hash = audit::ComputeHash(e);
    prev = e.hash;
    chain.push_back(e);
  }
  audit::ChainHead head{5, prev};
  auto run = [&](std::vector<AuditEvent> events, audit::ChainHead h) {
    audit::ChainVerifier v;
    for (const auto& e : events) {
      if (!v.Add(e)) break;
    }
    return v.Finish(h);
  };
  EXPECT_TRUE(run(chain, head).ok);

  auto edited = chain;
  edited[2].actor = "mallory";
  EXPECT_EQ(run(edited, head).first_bad_seq, 3);

  auto deleted = chain;
  deleted.erase(deleted.begin() + 1);
  EXPECT_EQ(run(deleted, head).first_bad_seq, 2);

  auto truncated = chain;
  truncated.pop_back();
  EXPECT_EQ(run(truncated, head).first_bad_seq, 5);

  auto swapped = chain;  // rows renumbered after a swap
  std::swap(swapped[1], swapped[3]);
  swapped[1].seq = 2;
  swapped[3].seq = 4;
  EXPECT_EQ(run(swapped, head).first_bad_seq, 2);

  auto details = chain;
  details[4].details = {{"inserted", true}};
  EXPECT_EQ(run(details, head).first_bad_seq, 5);
}

}  // namespace
}  // namespace causeway
