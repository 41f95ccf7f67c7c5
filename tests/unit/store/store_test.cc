#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "store/rows.h"
#include "store/audit_chain.h"
#include "causeway/ids.h"
#include "causeway/store.h"
#include "store/postgres/pg_conn.h"
#include "unit/temp_db.h"

namespace causeway {
namespace {

// The same suite on every backend: SQLite and a real PostgreSQL server.
class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  StoreTest() : db_(GetParam()) {}
  void SetUp() override {
    if (!db_.skip().empty()) GTEST_SKIP() << db_.skip();
    Reopen();
  }
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

  // Runs SQL on the database behind the store, beside it: `sqlite_sql` on
  // SQLite, `pg_sql` on PostgreSQL.
  void ExecRaw(const std::string& sqlite_sql, const std::string& pg_sql) {
    if (GetParam() == std::string("sqlite")) {
      sqlite3* db = nullptr;
      ASSERT_EQ(sqlite3_open(db_.path().c_str(), &db), SQLITE_OK);
      sqlite3_busy_timeout(db, 5000);
      char* err = nullptr;
      EXPECT_EQ(sqlite3_exec(db, sqlite_sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
      sqlite3_free(err);
      sqlite3_close(db);
    } else {
      auto conn = pg::Conn::Open(db_.url());
      ASSERT_TRUE(conn.ok()) << conn.status().ToString();
      Status st = (*conn)->ExecScript(pg_sql.c_str());
      EXPECT_TRUE(st.ok()) << st.ToString();
    }
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

// Every row declared in rows.h names only columns its table has, on both
// backends: a column misspelt or dropped in the declaration fails here.
TEST_P(StoreTest, EveryDeclaredRowNamesColumnsItsTableHas) {
  const std::pair<const char*, std::string> declared[] = {
      {"jobs", rows::kJobRow.Names()},
      {"jobs", rows::kJobInsertRow.Names()},
      {"job_events", rows::kJobEventRow.Names()},
      {"attempts", rows::kAttemptRow.Names()},
      {"checkpoints", rows::kCheckpointRow.Names()},
      {"job_facts", rows::kJobFactRow.Names()},
      {"idempotency_keys", rows::kIdempotencyRow.Names()},
      {"api_tokens", rows::kTokenRow.Names()},
      {"signing_keys", rows::kSigningKeyRow.Names()},
      {"directory", rows::kDirectoryRow.Names()},
      {"breakglass", rows::kBreakglassRow.Names()},
      {"dataset_versions", rows::kDatasetVersionRow.Names()},
      {"dataset_replicas", rows::kDatasetReplicaRow.Names()},
      {"data_charges", rows::kDataChargeRow.Names()},
      {"imported_audit", rows::kImportedAuditRow.Names()},
      {"leases", rows::kLeaseRow.Names()},
      {"billing_imports", rows::kBillingImportRow.Names()},
      {"audit_events", rows::kAuditRow.Names()},
      {"changes", rows::kChangeRow.Names()},
  };
  for (const auto& [table, names] : declared) {
    std::string sql = "SELECT " + names + " FROM " + table + " LIMIT 0";
    SCOPED_TRACE(sql);
    ExecRaw(sql, sql);
  }
  EXPECT_EQ(rows::kJobRow.kCount, 25);
  EXPECT_EQ(rows::kAttemptRow.Names("a").rfind("a.job_id, a.number", 0), 0u);
  static_assert(rows::kChangeRow.Index("kind") == 1 && rows::kChangeRow.Index("none") == rows::kChangeRow.kCount);
}

TEST_P(StoreTest, WritesAndReadsBack) {
  JobRecord j = Job();
  ASSERT_TRUE(store_->Write(InsertWithAudit(j)).ok());
  auto got = store_->GetJob(j.id);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->team, "nlp");
  EXPECT_EQ((*got)->created_at, j.created_at);
  EXPECT_FALSE(store_->GetJob("job_missing")->has_value());
}

TEST_P(StoreTest, GetJobsReadsManyAtOnce) {
  JobRecord a = Job(), b = Job(), odd = Job();
  odd.id = "job_\"quoted\",{braced}\\";  // quotes, commas, braces, a backslash
  for (const JobRecord& j : {a, b, odd}) ASSERT_TRUE(store_->Write(InsertWithAudit(j)).ok());
  auto got = store_->GetJobs({b.id, "job_missing", odd.id, a.id});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  std::set<std::string> ids;
  for (const JobRecord& j : *got) ids.insert(j.id);
  EXPECT_EQ(ids, (std::set<std::string>{a.id, b.id, odd.id}));
  EXPECT_TRUE(store_->GetJobs({})->empty());
}

TEST_P(StoreTest, AFailingUnitIsRolledBackAndTheOthersCommit) {
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

// The commit says which sequence numbers each unit's audit events took, on
// every backend (PostgreSQL links the chain only as the batch commits), and
// a unit that failed took none.
TEST_P(StoreTest, ACommitReturnsTheSequenceNumbersItAssigned) {
  ASSERT_TRUE(store_->Write(InsertWithAudit(Job())).ok());  // seq 1
  JobRecord a = Job(), b = Job();
  WriteFn two = [a](WriteTx& tx) -> Status {
    RETURN_IF_ERROR(tx.InsertJob(a));
    AuditEvent e = Event("job.submit", "job/" + a.id), f = Event("job.note", "job/" + a.id);
    RETURN_IF_ERROR(tx.AppendAudit(e));
    return tx.AppendAudit(f);
  };
  WriteFn fails = [](WriteTx& tx) -> Status {
    AuditEvent e = Event("job.submit", "job/job_never");
    RETURN_IF_ERROR(tx.AppendAudit(e));
    return InvalidArgument("changed my mind");
  };
  WriteFn one = InsertWithAudit(b);
  WriteFn none = [](WriteTx&) { return Status::Ok(); };  // reads only
  std::vector<Committed> results = store_->CommitBatch({&two, &fails, &one, &none});
  ASSERT_EQ(results.size(), 4u);
  ASSERT_TRUE(results[0].status.ok()) << results[0].status.ToString();
  EXPECT_EQ(results[0].audit_seqs, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(results[1].status.code(), Code::kInvalidArgument);
  EXPECT_TRUE(results[1].audit_seqs.empty());
  ASSERT_TRUE(results[2].status.ok());
  EXPECT_EQ(results[2].audit_seqs, (std::vector<int64_t>{4}));
  EXPECT_TRUE(results[3].status.ok());
  EXPECT_TRUE(results[3].audit_seqs.empty());
  // They are the numbers the events are stored under.
  auto events = store_->ListAudit(AuditFilter{.after_seq = 1, .limit = 10});
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ((*events)[0].action, "job.submit");
  EXPECT_EQ((*events)[1].action, "job.note");
  EXPECT_EQ((*events)[2].resource, "job/" + b.id);
  EXPECT_EQ((*events)[2].seq, 4);
}

// The change feed: each change takes its audit event's number, in commit
// order on every backend; a unit that fails leaves none, and a change needs
// the event that describes it.
TEST_P(StoreTest, ChangesAreNumberedLikeTheirAuditEventsAndRolledBackWithTheirUnit) {
  ASSERT_TRUE(store_->Write(InsertWithAudit(Job())).ok());  // seq 1, no change
  Timestamp at = clock_.Now();
  auto change = [at](Change::Kind kind, const std::string& job, const std::string& path = "") {
    return Change{0, kind, job, path, at};
  };
  WriteFn submit = [&](WriteTx& tx) -> Status {
    AuditEvent e = Event("job.submit", "job/a");
    RETURN_IF_ERROR(tx.AppendAudit(e));
    return tx.AppendChange(change(Change::Kind::kSubmitted, "job_a"));
  };
  WriteFn fails = [&](WriteTx& tx) -> Status {
    AuditEvent e = Event("job.cancel", "job/b");
    RETURN_IF_ERROR(tx.AppendAudit(e));
    RETURN_IF_ERROR(tx.AppendChange(change(Change::Kind::kCancelled, "job_b")));
    return InvalidArgument("changed my mind");
  };
  WriteFn checkpoint = [&](WriteTx& tx) -> Status {
    AuditEvent e = Event("job.note", "job/a"), f = Event("checkpoint.register", "job/a");
    RETURN_IF_ERROR(tx.AppendAudit(e));
    RETURN_IF_ERROR(tx.AppendAudit(f));
    return tx.AppendChange(change(Change::Kind::kCheckpoint, "job_a", "s3://b/step-1"));
  };
  WriteFn unaudited = [&](WriteTx& tx) -> Status { return tx.AppendChange(change(Change::Kind::kCancelled, "job_c")); };
  auto results = store_->CommitBatch({&submit, &fails, &checkpoint, &unaudited});
  ASSERT_TRUE(results[0].status.ok()) << results[0].status.ToString();
  EXPECT_EQ(results[1].status.code(), Code::kInvalidArgument);
  ASSERT_TRUE(results[2].status.ok()) << results[2].status.ToString();
  EXPECT_EQ(results[3].status.code(), Code::kFailedPrecondition);

  auto changes = store_->ListChanges(0, 10);
  ASSERT_TRUE(changes.ok()) << changes.status().ToString();
  ASSERT_EQ(changes->size(), 2u);
  EXPECT_EQ((*changes)[0].seq, 2);
  EXPECT_EQ((*changes)[0].kind, Change::Kind::kSubmitted);
  EXPECT_EQ((*changes)[0].job_id, "job_a");
  EXPECT_EQ((*changes)[0].at, at);
  EXPECT_EQ((*changes)[1].seq, 4) << "numbered like the checkpoint's event, the unit's last";
  EXPECT_EQ((*changes)[1].kind, Change::Kind::kCheckpoint);
  EXPECT_EQ((*changes)[1].path, "s3://b/step-1");
  EXPECT_EQ(results[2].audit_seqs, (std::vector<int64_t>{3, 4}));
  // A cursor and a limit.
  auto after = store_->ListChanges(2, 10);
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->size(), 1u);
  EXPECT_EQ(after->front().seq, 4);
  EXPECT_EQ(store_->ListChanges(0, 1)->size(), 1u);
  EXPECT_TRUE(Verify().ok);
}

TEST_P(StoreTest, PruningTheFeedDropsOnlyWhatWasFollowedAndIsOldEnough) {
  Timestamp old = clock_.Now(), recent = old + std::chrono::hours(2);
  for (auto [job, at] : {std::pair{"job_a", old}, {"job_b", old}, {"job_c", recent}, {"job_d", old}}) {
    std::string id = job;
    Timestamp when = at;
    ASSERT_TRUE(store_->Write([&](WriteTx& tx) -> Status {
      AuditEvent e = Event("job.submit", "job/" + id);
      RETURN_IF_ERROR(tx.AppendAudit(e));
      return tx.AppendChange(Change{0, Change::Kind::kSubmitted, id, "", when});
    }).ok());
  }
  // Followed through seq 3 (job_c's), pruned of what is older than an hour
  // after `old`: job_a and job_b go; job_c is too recent, job_d not followed.
  ASSERT_TRUE(store_->Write([&](WriteTx& tx) { return tx.PruneChanges(3, old + std::chrono::hours(1)); }).ok());
  auto left = store_->ListChanges(0, 10);
  ASSERT_TRUE(left.ok()) << left.status().ToString();
  std::vector<std::string> jobs;
  for (const Change& c : *left) jobs.push_back(c.job_id);
  EXPECT_EQ(jobs, (std::vector<std::string>{"job_c", "job_d"}));
  EXPECT_TRUE(Verify().ok) << "the audit trail is untouched";
}

// The units whose writes reach the database before they end (a read after a
// write) and the units whose writes are held to the end both stay atomic on
// their own, however the backend runs the batch.
TEST_P(StoreTest, EachUnitStaysAtomicWhateverItReadsOrFailsOn) {
  JobRecord a = Job(), b = Job(), c = Job(), taken = Job();
  ASSERT_TRUE(store_->Write(InsertWithAudit(taken)).ok());
  WriteFn ok1 = InsertWithAudit(a);
  bool saw_own_write = false;
  WriteFn reads_then_fails = [&](WriteTx& tx) -> Status {
    JobRecord j = c;
    RETURN_IF_ERROR(tx.InsertJob(j));
    ASSIGN_OR_RETURN(auto back, tx.GetJob(j.id));
    saw_own_write = back.has_value();
    RETURN_IF_ERROR(tx.UpdateJobState(j.id, JobState::kCancelled, j.created_at));
    AuditEvent e = Event("job.submit", "job/" + j.id);
    RETURN_IF_ERROR(tx.AppendAudit(e));
    return FailedPrecondition("changed my mind after reading");
  };
  WriteFn duplicate = InsertWithAudit(taken);
  WriteFn ok2 = InsertWithAudit(b);
  auto results = store_->WriteBatch({&ok1, &reads_then_fails, &duplicate, &ok2});
  EXPECT_TRUE(results[0].ok()) << results[0].ToString();
  EXPECT_EQ(results[1].code(), Code::kFailedPrecondition) << results[1].ToString();
  EXPECT_EQ(results[2].code(), Code::kAlreadyExists) << results[2].ToString();
  EXPECT_TRUE(results[3].ok()) << results[3].ToString();
  EXPECT_TRUE(saw_own_write);
  EXPECT_TRUE(store_->GetJob(a.id)->has_value());
  EXPECT_TRUE(store_->GetJob(b.id)->has_value());
  EXPECT_FALSE(store_->GetJob(c.id)->has_value());
  auto report = Verify();
  EXPECT_TRUE(report.ok) << report.reason;
  EXPECT_EQ(report.events, 3);
}

// A batch that replays one key and claims others: the replay sees the
// stored record, the claims commit, a key claimed twice in the batch answers
// the second time with the first claim.
TEST_P(StoreTest, IdempotencyClaimsInOneBatch) {
  JobRecord old = Job(), a = Job(), b = Job();
  auto submit = [&](const JobRecord& j, const std::string& key, std::optional<IdempotencyRecord>* prior) -> WriteFn {
    return [=](WriteTx& tx) -> Status {
      ASSIGN_OR_RETURN(*prior, tx.ClaimIdempotency({"tok_x", key, "h-" + j.id, j.id, j.created_at}));
      if (*prior) return Status::Ok();
      RETURN_IF_ERROR(tx.InsertJob(j));
      AuditEvent e = Event("job.submit", "job/" + j.id);
      return tx.AppendAudit(e);
    };
  };
  std::optional<IdempotencyRecord> p0, p1, p2, p3;
  ASSERT_TRUE(store_->Write(submit(old, "k-old", &p0)).ok());
  EXPECT_FALSE(p0.has_value());
  WriteFn replay = submit(a, "k-old", &p1), fresh = submit(a, "k-new", &p2), twice = submit(b, "k-new", &p3);
  auto results = store_->WriteBatch({&replay, &fresh, &twice});
  for (const Status& st : results) EXPECT_TRUE(st.ok()) << st.ToString();
  ASSERT_TRUE(p1.has_value());
  EXPECT_EQ(p1->job_id, old.id);
  EXPECT_FALSE(p2.has_value());
  ASSERT_TRUE(p3.has_value());
  EXPECT_EQ(p3->job_id, a.id);
  EXPECT_TRUE(store_->GetJob(a.id)->has_value());
  EXPECT_FALSE(store_->GetJob(b.id)->has_value());
  EXPECT_TRUE(Verify().ok);
}

TEST_P(StoreTest, AStateChangeWithoutAnAuditEventIsRefused) {
  JobRecord j = Job();
  Status st = store_->Write([&](WriteTx& tx) { return tx.InsertJob(j); });
  EXPECT_EQ(st.code(), Code::kInternal);
  EXPECT_NE(st.message().find("audit"), std::string::npos);
  EXPECT_FALSE(store_->GetJob(j.id)->has_value());
}

TEST_P(StoreTest, DuplicateIdIsAlreadyExists) {
  JobRecord j = Job();
  ASSERT_TRUE(store_->Write(InsertWithAudit(j)).ok());
  EXPECT_EQ(store_->Write(InsertWithAudit(j)).code(), Code::kAlreadyExists);
}

TEST_P(StoreTest, DirectoryEntriesAreUniqueByNameIgnoringCaseAndReadBackWhole) {
  auto put = [&](DirectoryEntry d) {
    return store_->Write([d](WriteTx& tx) -> Status {
      RETURN_IF_ERROR(tx.PutDirectoryEntry(d));
      AuditEvent e = Event("scim.user.create", "user/" + d.id);
      return tx.AppendAudit(e);
    });
  };
  DirectoryEntry alice;
  alice.kind = "User";
  alice.id = "usr_1";
  alice.name = "Alice@Corp.example";
  alice.external_id = "00u1";
  alice.resource = R"({"name":{"givenName":"Alice"},"quote":"it's \"fine\"","userName":"Alice@Corp.example"})";
  alice.created_at = alice.updated_at = FromUnixMicros(1'700'000'000'000'000);
  ASSERT_TRUE(put(alice).ok());
  DirectoryEntry twin = alice;
  twin.id = "usr_2";
  twin.name = "alice@corp.EXAMPLE";
  Status taken = put(twin);
  EXPECT_EQ(taken.code(), Code::kAlreadyExists) << taken.ToString();
  EXPECT_NE(taken.message().find("already named"), std::string::npos) << taken.message();
  // A group may share a user's name: uniqueness is per kind.
  DirectoryEntry group = alice;
  group.kind = "Group";
  group.id = "grp_1";
  ASSERT_TRUE(put(group).ok());

  // Replacing keeps the key; the whole entry reads back.
  alice.active = false;
  alice.version = 2;
  alice.resource = R"({"active":false,"name":{"givenName":"Alice"},"userName":"Alice@Corp.example"})";
  ASSERT_TRUE(put(alice).ok());
  auto users = store_->ListDirectory("User");
  ASSERT_TRUE(users.ok());
  ASSERT_EQ(users->size(), 1u);
  const DirectoryEntry& got = (*users)[0];
  EXPECT_EQ(got.id, "usr_1");
  EXPECT_EQ(got.name, "Alice@Corp.example");
  EXPECT_EQ(got.external_id, "00u1");
  EXPECT_FALSE(got.active);
  EXPECT_EQ(got.version, 2);
  EXPECT_EQ(got.resource, alice.resource);
  EXPECT_EQ(got.created_at, alice.created_at);
  auto found = store_->FindDirectoryEntry("Group", "grp_1");
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->kind, "Group");
  // By name, ignoring ASCII case as uniqueness does, within the kind.
  auto named = store_->FindDirectoryEntryByName("User", "ALICE@corp.Example");
  ASSERT_TRUE(named.ok() && named->has_value()) << named.status().ToString();
  EXPECT_EQ((*named)->id, "usr_1");
  EXPECT_EQ((*named)->resource, alice.resource);
  EXPECT_EQ((*store_->FindDirectoryEntryByName("Group", "alice@corp.example"))->id, "grp_1");
  EXPECT_FALSE(store_->FindDirectoryEntryByName("User", "bob@corp.example")->has_value());

  Status gone = store_->Write([](WriteTx& tx) -> Status {
    RETURN_IF_ERROR(tx.DeleteDirectoryEntry("User", "usr_1"));
    AuditEvent e = Event("scim.user.delete", "user/usr_1");
    return tx.AppendAudit(e);
  });
  ASSERT_TRUE(gone.ok()) << gone.ToString();
  EXPECT_TRUE(store_->ListDirectory("User")->empty());
  Status again = store_->Write([](WriteTx& tx) -> Status { return tx.DeleteDirectoryEntry("User", "usr_1"); });
  EXPECT_EQ(again.code(), Code::kNotFound);
  // The name is free again once its holder is gone.
  ASSERT_TRUE(put(twin).ok());
}

TEST_P(StoreTest, GroupMembershipsFollowEachGroupAsStoredAndAreFoundByMember) {
  auto write = [&](const std::function<Status(WriteTx&)>& change) {
    return store_->Write([change](WriteTx& tx) -> Status {
      RETURN_IF_ERROR(change(tx));
      AuditEvent e = Event("scim.group.update", "group/x");
      return tx.AppendAudit(e);
    });
  };
  auto group = [](const std::string& id, const std::string& name, const std::string& members) {
    DirectoryEntry g;
    g.kind = "Group";
    g.id = id;
    g.name = name;
    g.resource = R"({"displayName":")" + name + R"(","members":)" + members + "}";
    return g;
  };
  auto names = [&](const std::string& member) {
    std::vector<std::string> out;
    auto groups = store_->ListGroupsOf(member);
    EXPECT_TRUE(groups.ok()) << groups.status().ToString();
    if (groups.ok()) {
      for (const DirectoryEntry& g : *groups) out.push_back(g.name);
    }
    return out;
  };
  DirectoryEntry ml = group("grp_b", "ml", R"([{"value":"usr_1"},{"value":"usr_2"},{"value":"usr_1"}])");
  DirectoryEntry ops = group("grp_a", "ops", R"([{"value":"usr_1","display":"Alice"},{"type":"User"},"junk"])");
  ASSERT_TRUE(write([&](WriteTx& tx) -> Status {
                RETURN_IF_ERROR(tx.PutDirectoryEntry(ml));
                return tx.PutDirectoryEntry(ops);
              }).ok());
  EXPECT_EQ(names("usr_1"), (std::vector<std::string>{"ops", "ml"})) << "ordered by group id, each once";
  EXPECT_EQ(names("usr_2"), std::vector<std::string>{"ml"});
  EXPECT_TRUE(names("usr_3").empty());
  ASSERT_EQ(store_->ListGroupsOf("usr_2")->front().resource, ml.resource) << "the whole group reads back";

  // Stored again without usr_2: the membership goes with the member.
  ml.resource = R"({"displayName":"ml","members":[{"value":"usr_3"}]})";
  ASSERT_TRUE(write([&](WriteTx& tx) { return tx.PutDirectoryEntry(ml); }).ok());
  EXPECT_TRUE(names("usr_2").empty());
  EXPECT_EQ(names("usr_3"), std::vector<std::string>{"ml"});
  // A deleted group holds nobody; a unit that fails changes nothing.
  ASSERT_TRUE(write([&](WriteTx& tx) { return tx.DeleteDirectoryEntry("Group", "grp_a"); }).ok());
  EXPECT_TRUE(names("usr_1").empty());
  Status failed = store_->Write([&](WriteTx& tx) -> Status {
    RETURN_IF_ERROR(tx.PutDirectoryEntry(group("grp_c", "c", R"([{"value":"usr_9"}])")));
    return Internal("no");
  });
  EXPECT_FALSE(failed.ok());
  EXPECT_TRUE(names("usr_9").empty());
}

// A database made before memberships were kept: its groups are read into
// them as the migration that adds them runs.
TEST_P(StoreTest, GroupsStoredBeforeMembershipsWereKeptAreReadIntoThemOnUpgrade) {
  DirectoryEntry g;
  g.kind = "Group";
  g.id = "grp_1";
  g.name = "ml";
  g.resource = R"({"displayName":"ml","members":[{"value":"usr_1"},{"value":"usr_2"}]})";
  ASSERT_TRUE(store_->Write([&](WriteTx& tx) -> Status {
                RETURN_IF_ERROR(tx.PutDirectoryEntry(g));
                AuditEvent e = Event("scim.group.create", "group/grp_1");
                return tx.AppendAudit(e);
              }).ok());
  store_.reset();
  const std::string older = "DROP TABLE directory_members; DELETE FROM schema_migrations WHERE version = 16;";
  ExecRaw(older, older);
  Reopen();
  for (const char* member : {"usr_1", "usr_2"}) {
    auto groups = store_->ListGroupsOf(member);
    ASSERT_TRUE(groups.ok()) << groups.status().ToString();
    ASSERT_EQ(groups->size(), 1u) << member;
    EXPECT_EQ((*groups)[0].name, "ml");
  }
}

TEST_P(StoreTest, ChainSurvivesReopenAndContinues) {
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(store_->Write(InsertWithAudit(Job())).ok());
  Reopen();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(store_->Write(InsertWithAudit(Job())).ok());
  auto report = Verify();
  EXPECT_TRUE(report.ok) << report.reason;
  EXPECT_EQ(report.events, 10);
  EXPECT_EQ(store_->GetAuditHead()->seq, 10);
}

TEST_P(StoreTest, ListJobsFiltersAndPagesNewestFirst) {
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

TEST_P(StoreTest, ListJobsByTheClustersTheyRanOn) {
  std::vector<JobRecord> jobs = {Job(), Job(), Job()};
  for (JobRecord& j : jobs) ASSERT_TRUE(store_->Write(InsertWithAudit(j)).ok());
  // The first ran on a, then b (a retry); the second on c; the third nowhere yet.
  ASSERT_TRUE(store_->Write([&](WriteTx& tx) -> Status {
    int n = 0;
    for (auto [job, cluster] : {std::pair{0, "a"}, {0, "b"}, {1, "c"}}) {
      Attempt a;
      a.job_id = jobs[static_cast<size_t>(job)].id;
      a.number = ++n;
      a.cluster = cluster;
      a.state = "succeeded";
      a.started_at = clock_.Now();
      RETURN_IF_ERROR(tx.PutAttempt(a));
    }
    AuditEvent e = Event("job.record", "job/" + jobs[0].id);
    return tx.AppendAudit(e);
  }).ok());
  auto ids = [&](std::vector<std::string> clusters) {
    JobFilter f;
    f.clusters = std::move(clusters);
    std::vector<std::string> out;
    auto listed = store_->ListJobs(f);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    if (listed.ok()) {
      for (const JobRecord& j : *listed) out.push_back(j.id);
    }
    return out;
  };
  EXPECT_EQ(ids({"b"}), std::vector<std::string>{jobs[0].id});
  EXPECT_EQ(ids({"a", "c"}), (std::vector<std::string>{jobs[1].id, jobs[0].id}));  // newest first, once each
  EXPECT_TRUE(ids({"d", "it's \"quoted\", {braced}"}).empty());
  EXPECT_EQ(ids({}).size(), 3u);  // no filter
}

TEST_P(StoreTest, PipelineStepsReadBackAndAreListedByPipeline) {
  JobRecord first = Job(), second = Job(), other = Job();
  for (JobRecord* j : {&first, &second}) {
    j->pipeline = "pl_1";
    j->pipeline_name = "nightly";
    j->steps = 2;
  }
  second.step = 1;
  second.after = first.id;
  for (const JobRecord& j : {first, second, other}) ASSERT_TRUE(store_->Write(InsertWithAudit(j)).ok());
  auto got = store_->GetJob(second.id);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->pipeline, "pl_1");
  EXPECT_EQ((*got)->pipeline_name, "nightly");
  EXPECT_EQ((*got)->step, 1);
  EXPECT_EQ((*got)->steps, 2);
  EXPECT_EQ((*got)->after, first.id);
  EXPECT_EQ(store_->GetJob(other.id)->value().pipeline, "");
  JobFilter f;
  f.pipeline = "pl_1";
  auto listed = store_->ListJobs(f);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  std::set<std::string> ids;
  for (const JobRecord& j : *listed) ids.insert(j.id);
  EXPECT_EQ(ids, (std::set<std::string>{first.id, second.id}));
  EXPECT_EQ(store_->ListJobs(JobFilter{})->size(), 3u);
}

TEST_P(StoreTest, JobGroupTasksReadBackWithTheirRoles) {
  JobRecord primary = Job(), auxiliary = Job();
  for (JobRecord* j : {&primary, &auxiliary}) {
    j->pipeline = "jg_1";
    j->pipeline_name = "rl";
    j->steps = 2;
    j->job_group = true;
  }
  auxiliary.step = 1;
  auxiliary.auxiliary = true;
  auxiliary.termination_delay_seconds = 90;
  for (const JobRecord& j : {primary, auxiliary}) ASSERT_TRUE(store_->Write(InsertWithAudit(j)).ok());
  auto a = store_->GetJob(auxiliary.id);
  ASSERT_TRUE(a.ok() && a->has_value());
  EXPECT_TRUE((*a)->job_group);
  EXPECT_TRUE((*a)->auxiliary);
  EXPECT_EQ((*a)->termination_delay_seconds, 90);
  auto p = store_->GetJob(primary.id);
  ASSERT_TRUE(p.ok() && p->has_value());
  EXPECT_TRUE((*p)->job_group);
  EXPECT_FALSE((*p)->auxiliary);
}

// What provenance reads: an attempt's facts, a checkpoint's digest, the
// facts a job recorded (numbered per job), and the job's range of the audit
// chain.
TEST_P(StoreTest, ProvenanceFactsDigestsAndAuditRangesReadBack) {
  JobRecord j = Job(), other = Job();
  ASSERT_TRUE(store_->Write(InsertWithAudit(j)).ok());
  ASSERT_TRUE(store_->Write(InsertWithAudit(other)).ok());
  std::string digest = "sha256:" + std::string(64, 'a');
  ASSERT_TRUE(store_->Write([&](WriteTx& tx) -> Status {
    Attempt a;
    a.job_id = j.id;
    a.number = 1;
    a.cluster = "c";
    a.state = "running";
    a.started_at = j.created_at;
    a.facts = R"({"probe":"ran"})";
    RETURN_IF_ERROR(tx.PutAttempt(a));
    Checkpoint cp{j.id, 0, 1, "s3://b/step-1", 1, j.created_at, digest};
    RETURN_IF_ERROR(tx.AddCheckpoint(cp));
    for (const char* name : {"mlflow.run_id", "artifact:model"}) {
      JobFact f{j.id, 0, 1, name, "\"x\"", "tokj", j.created_at};
      RETURN_IF_ERROR(tx.AddJobFact(f));
    }
    AuditEvent e = Event("job.record", "job/" + j.id);
    return tx.AppendAudit(e);
  }).ok());
  auto attempts = store_->ListAttempts(j.id);
  ASSERT_TRUE(attempts.ok() && attempts->size() == 1u);
  EXPECT_EQ((*attempts)[0].facts, R"({"probe":"ran"})");
  auto cps = store_->ListCheckpoints(j.id);
  ASSERT_TRUE(cps.ok() && cps->size() == 1u);
  EXPECT_EQ((*cps)[0].digest, digest);
  auto facts = store_->ListJobFacts(j.id);
  ASSERT_TRUE(facts.ok() && facts->size() == 2u);
  EXPECT_EQ((*facts)[0].seq, 1);
  EXPECT_EQ((*facts)[1].seq, 2);
  EXPECT_EQ((*facts)[1].name, "artifact:model");
  EXPECT_EQ((*facts)[1].recorded_by, "tokj");
  EXPECT_TRUE(store_->ListJobFacts(other.id)->empty());
  auto range = store_->GetAuditRange("job/" + j.id);
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->count, 2);
  EXPECT_LT(range->first, range->last);
  auto none = store_->GetAuditRange("job/none");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->count, 0);
  EXPECT_EQ(none->first, 0);
}

// Only finished jobs wait to be sealed, oldest first; a sealed one leaves
// the list, keeps its first record when sealed twice, and reads back by id.
TEST_P(StoreTest, SealedRecordsAreKeptOnceAndFinishedJobsWaitForThem) {
  JobRecord running = Job(), done = Job(), failed = Job();
  for (JobRecord* j : {&running, &done, &failed}) ASSERT_TRUE(store_->Write(InsertWithAudit(*j)).ok());
  auto none = store_->ListUnsealedJobs(10);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty()) << "no job has finished";
  Status ended = store_->Write([&](WriteTx& tx) -> Status {
    RETURN_IF_ERROR(tx.UpdateJobState(done.id, JobState::kSucceeded, done.created_at));
    RETURN_IF_ERROR(tx.UpdateJobState(failed.id, JobState::kFailed, failed.created_at));
    AuditEvent e = Event("job.finish", "job/" + done.id);
    return tx.AppendAudit(e);
  });
  ASSERT_TRUE(ended.ok()) << ended.ToString();
  auto waiting = store_->ListUnsealedJobs(10);
  ASSERT_TRUE(waiting.ok());
  std::vector<std::string> finished = {done.id, failed.id};
  std::sort(finished.begin(), finished.end());
  EXPECT_EQ(*waiting, finished);
  EXPECT_EQ(store_->ListUnsealedJobs(1)->size(), 1u);

  SealedRecord first{done.id, "provenance-k1", done.created_at, R"({"payload":"first"})"};
  SealedRecord second{done.id, "provenance-k2", done.created_at, R"({"payload":"second"})"};
  for (const SealedRecord& r : {first, second}) {
    ASSERT_TRUE(store_->Write([&](WriteTx& tx) -> Status {
      RETURN_IF_ERROR(tx.PutSealedRecord(r));
      AuditEvent e = Event("provenance.seal", "signing-key/" + r.kid);
      return tx.AppendAudit(e);
    }).ok());
  }
  EXPECT_EQ(*store_->ListUnsealedJobs(10), std::vector<std::string>{failed.id});
  auto read = store_->GetSealedRecords({done.id, failed.id, running.id, "job_none"});
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ((*read)[0].job_id, done.id);
  EXPECT_EQ((*read)[0].kid, "provenance-k1");
  EXPECT_EQ((*read)[0].envelope, first.envelope) << "the first record is kept";
  EXPECT_EQ((*read)[0].sealed_at, done.created_at);
  EXPECT_TRUE(store_->GetSealedRecords({})->empty());
}

TEST_P(StoreTest, IdempotencyTokensAndStateUpdates) {
  JobRecord j = Job();
  ASSERT_TRUE(store_->Write([&](WriteTx& tx) -> Status {
    RETURN_IF_ERROR(tx.InsertJob(j));
    auto claimed = tx.ClaimIdempotency({"tok_x", "k1", "h", j.id, j.created_at});
    RETURN_IF_ERROR(claimed.status());
    EXPECT_FALSE(claimed->has_value());
    // Claimed twice in one unit: the first claim answers.
    auto again = tx.ClaimIdempotency({"tok_x", "k1", "h2", "job_other", j.created_at});
    EXPECT_TRUE(again.ok() && again->has_value() && (*again)->job_id == j.id);
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
  // A key claimed before answers with its record and stores nothing. (A
  // unit may run twice, so what it saw is checked after the batch.)
  std::optional<IdempotencyRecord> prior;
  ASSERT_TRUE(store_->Write([&](WriteTx& tx) -> Status {
    ASSIGN_OR_RETURN(prior, tx.ClaimIdempotency({"tok_x", "k1", "h3", "job_later", j.created_at}));
    return Status::Ok();
  }).ok());
  ASSERT_TRUE(prior.has_value());
  EXPECT_EQ(prior->job_id, j.id);
  EXPECT_EQ(prior->request_hash, "h");
  Status missing = store_->Write([&](WriteTx& tx) -> Status {
    RETURN_IF_ERROR(tx.UpdateJobState("job_nope", JobState::kFailed, j.created_at));
    AuditEvent e = Event("test", "job/job_nope");
    return tx.AppendAudit(e);
  });
  EXPECT_EQ(missing.code(), Code::kNotFound);
  EXPECT_EQ((*store_->GetJob(j.id))->state, JobState::kCancelled);
  EXPECT_EQ(store_->ListJobEvents(j.id)->size(), 1u);
  auto tok = store_->FindTokenByHash("abc");
  ASSERT_TRUE(tok->has_value());
  EXPECT_TRUE((*tok)->revoked_at.has_value());
  EXPECT_EQ((*tok)->scopes, std::vector<std::string>{"jobs:read"});
}

TEST_P(StoreTest, AuditFilters) {
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(store_->Write(InsertWithAudit(Job())).ok());
  AuditFilter f;
  f.action = "job.";
  EXPECT_EQ(store_->ListAudit(f)->size(), 3u);
  f.action = "job.sub";  // a prefix must end in '.'
  EXPECT_EQ(store_->ListAudit(f)->size(), 0u);
  AuditFilter after;
  after.after_seq = 2;
  EXPECT_EQ(store_->ListAudit(after)->size(), 1u);
  // Newest first, paged back with before_seq.
  AuditFilter newest;
  newest.newest_first = true;
  newest.limit = 2;
  auto page = store_->ListAudit(newest);
  ASSERT_TRUE(page.ok() && page->size() == 2u);
  EXPECT_EQ((*page)[0].seq, 3);
  EXPECT_EQ((*page)[1].seq, 2);
  newest.before_seq = (*page)[1].seq;
  page = store_->ListAudit(newest);
  ASSERT_TRUE(page.ok() && page->size() == 1u);
  EXPECT_EQ((*page)[0].seq, 1);
  // Until: only events before it.
  AuditFilter until;
  until.until = (*page)[0].time;
  EXPECT_TRUE(store_->ListAudit(until)->empty());
  until.until = (*page)[0].time + std::chrono::microseconds(1);
  EXPECT_EQ(store_->ListAudit(until)->size(), 1u);
}

TEST_P(StoreTest, ReadOnlyOpenRefusesWritesAndMissingDatabasesFail) {
  ASSERT_TRUE(store_->Write(InsertWithAudit(Job())).ok());
  auto ro = OpenStore(db_.url(), true);
  ASSERT_TRUE(ro.ok()) << ro.status().ToString();
  EXPECT_EQ((*ro)->Write(InsertWithAudit(Job())).code(), Code::kFailedPrecondition);
  EXPECT_EQ((*ro)->ListJobs({})->size(), 1u);
  EXPECT_FALSE(OpenStore(db_.url() + "_missing", true).ok());
}

// Replicas: several stores on one database write at once; the chain stays
// one line and nothing is lost. (On SQLite, several processes share the
// file the same way.)
TEST_P(StoreTest, ConcurrentStoresKeepOneChain) {
  std::vector<std::unique_ptr<Store>> replicas;
  for (int i = 0; i < 3; ++i) replicas.push_back(db_.Open());
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  std::mutex mu;
  for (int w = 0; w < 6; ++w) {
    writers.emplace_back([&, w] {
      for (int b = 0; b < 20; ++b) {
        std::vector<WriteFn> fns;
        {
          std::lock_guard<std::mutex> lock(mu);
          for (int k = 0; k < 5; ++k) fns.push_back(InsertWithAudit(Job()));
        }
        std::vector<const WriteFn*> batch;
        for (const auto& f : fns) batch.push_back(&f);
        for (const Status& st : replicas[static_cast<size_t>(w % 3)]->WriteBatch(batch)) {
          if (!st.ok()) ++failures;
        }
      }
    });
  }
  for (auto& t : writers) t.join();
  EXPECT_EQ(failures.load(), 0);
  auto report = Verify();
  EXPECT_TRUE(report.ok) << report.reason;
  EXPECT_EQ(report.events, 6 * 20 * 5);
  JobFilter all;
  all.limit = 1000;
  EXPECT_EQ(store_->ListJobs(all)->size(), 600u);
}

// Launches are recorded before they are made; the highest number stays.
TEST_P(StoreTest, LaunchesAreRecorded) {
  JobRecord j = Job();
  ASSERT_TRUE(store_->Write(InsertWithAudit(j)).ok());
  EXPECT_EQ(*store_->LastLaunch(j.id), 0);
  for (int attempt : {1, 2}) {
    ASSERT_TRUE(store_->Write([&](WriteTx& tx) -> Status {
      RETURN_IF_ERROR(tx.RecordLaunch(j.id, attempt, "c1", clock_.Now()));
      AuditEvent e = Event("job.launch", "job/" + j.id);
      return tx.AppendAudit(e);
    }).ok());
  }
  EXPECT_EQ(*store_->LastLaunch(j.id), 2);
  EXPECT_EQ(*store_->LastLaunch("job_other"), 0);
}

TEST_P(StoreTest, ImportedAuditEventsAreStoredOnceAndSearchedByIdentityProviderActionAndCursor) {
  auto row = [&](const std::string& provider, const std::string& id, int64_t time_ms, const std::string& actor,
                 const std::string& activity, const std::string& operation) {
    ImportedAuditEvent e;
    e.provider = provider;
    e.source = "k8s";
    e.source_id = id;
    e.time_ms = time_ms;
    e.class_uid = 6003;
    e.activity = activity;
    e.operation = operation;
    e.actor = actor;
    e.resource = "pods/x";
    e.status_id = 1;
    e.event = "{\"id\":\"" + id + "\"}";
    e.imported_at = clock_.Now();
    return e;
  };
  std::vector<ImportedAuditEvent> rows = {
      row("coreweave", "a", 3000, "alice@corp.example", "create", "create"),
      row("coreweave", "b", 1000, "bob@corp.example", "delete", "delete"),
      row("aws", "c", 2000, "alice", "delete", "DeleteBucket"),
      row("aws", "a", 2000, "alice", "read", "GetObject"),  // same source id, other provider: its own event
  };
  bool stored_twice = true;
  ASSERT_TRUE(store_->Write([&](WriteTx& tx) -> Status {
    for (ImportedAuditEvent& e : rows) {
      ASSIGN_OR_RETURN(bool fresh, tx.InsertImportedAudit(e));
      EXPECT_TRUE(fresh);
    }
    ImportedAuditEvent again = rows[0];
    ASSIGN_OR_RETURN(stored_twice, tx.InsertImportedAudit(again));
    // The events on one object, newest first, up to a time: what made an
    // object, for a deletion that names nobody.
    ASSIGN_OR_RETURN(auto on, tx.ImportedAuditOn("coreweave", "k8s", "pods/x", 3000, 10));
    EXPECT_EQ(on, (std::vector<std::string>{"{\"id\":\"a\"}", "{\"id\":\"b\"}"}));
    ASSIGN_OR_RETURN(on, tx.ImportedAuditOn("coreweave", "k8s", "pods/x", 2999, 10));
    EXPECT_EQ(on, (std::vector<std::string>{"{\"id\":\"b\"}"}));
    ASSIGN_OR_RETURN(on, tx.ImportedAuditOn("coreweave", "k8s", "pods/y", 3000, 10));
    EXPECT_TRUE(on.empty());
    ASSIGN_OR_RETURN(on, tx.ImportedAuditOn("coreweave", "k8s", "pods/x", 3000, 1));
    EXPECT_EQ(on.size(), 1u);
    AuditEvent ev = Event("audit.import", "audit-source/coreweave/k8s");
    return tx.AppendAudit(ev);
  }).ok());
  EXPECT_FALSE(stored_twice);
  auto ids = [](const Result<std::vector<ImportedAuditEvent>>& r) {
    std::vector<std::string> out;
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok()) {
      for (const auto& e : *r) out.push_back(e.provider + "/" + e.source_id);
    }
    return out;
  };
  ImportedAuditQuery all;
  EXPECT_EQ(ids(store_->SearchImportedAudit(all)),
            (std::vector<std::string>{"coreweave/b", "aws/c", "aws/a", "coreweave/a"}));  // by time, then id
  ImportedAuditQuery alice;
  alice.identities = {{"", "alice@corp.example"}, {"aws", "alice"}};
  EXPECT_EQ(ids(store_->SearchImportedAudit(alice)), (std::vector<std::string>{"aws/c", "aws/a", "coreweave/a"}));
  alice.identities = {{"coreweave", "alice"}};  // "alice" only at CoreWeave: nobody
  EXPECT_TRUE(ids(store_->SearchImportedAudit(alice)).empty());
  ImportedAuditQuery deletes;
  deletes.action = "DELETE";
  EXPECT_EQ(ids(store_->SearchImportedAudit(deletes)), (std::vector<std::string>{"coreweave/b", "aws/c"}));
  deletes.action = "getobject";
  deletes.provider = "aws";
  EXPECT_EQ(ids(store_->SearchImportedAudit(deletes)), (std::vector<std::string>{"aws/a"}));
  ImportedAuditQuery window;
  window.since_ms = 2000;
  window.until_ms = 3000;
  window.limit = 1;
  auto first = store_->SearchImportedAudit(window);
  EXPECT_EQ(ids(first), (std::vector<std::string>{"aws/c"}));
  window.after_time_ms = first->back().time_ms;
  window.after_id = first->back().id;
  EXPECT_EQ(ids(store_->SearchImportedAudit(window)), (std::vector<std::string>{"aws/a"}));
  // Newest first, the cursor pages back.
  ImportedAuditQuery newest;
  newest.newest_first = true;
  newest.limit = 2;
  auto latest = store_->SearchImportedAudit(newest);
  EXPECT_EQ(ids(latest), (std::vector<std::string>{"coreweave/a", "aws/a"}));
  newest.after_time_ms = latest->back().time_ms;
  newest.after_id = latest->back().id;
  EXPECT_EQ(ids(store_->SearchImportedAudit(newest)), (std::vector<std::string>{"aws/c", "coreweave/b"}));
  EXPECT_EQ(ids(store_->ListImportedAuditSince(rows[1].id, 10)), (std::vector<std::string>{"aws/c", "aws/a"}));
  auto sources = store_->ListImportedSources();
  ASSERT_TRUE(sources.ok());
  ASSERT_EQ(sources->size(), 2u);
  EXPECT_EQ((*sources)[0].provider, "aws");
  EXPECT_EQ((*sources)[0].events, 2);
  EXPECT_EQ((*sources)[1].newest_event_ms, 3000);
  EXPECT_TRUE(Verify().ok);
}

// Fail closed on both backends: when the audit trail cannot be written, the
// change it describes is refused, unavailable (the trail may come back), and
// nothing of it is kept.
TEST_P(StoreTest, AChangeWhoseAuditEventCannotBeWrittenIsRefusedAsUnavailable) {
  JobRecord kept = Job(), refused = Job();
  ASSERT_TRUE(store_->Write(InsertWithAudit(kept)).ok());
  ExecRaw("CREATE TRIGGER audit_device_full BEFORE INSERT ON audit_events BEGIN SELECT RAISE(ABORT, 'audit device full'); END",
       "CREATE FUNCTION audit_device_full() RETURNS trigger LANGUAGE plpgsql AS "
       "$$ BEGIN RAISE EXCEPTION 'audit device full'; END $$;"
       "CREATE TRIGGER audit_device_full BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION audit_device_full()");
  Status st = store_->Write(InsertWithAudit(refused));
  EXPECT_EQ(st.code(), Code::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("audit"), std::string::npos) << st.ToString();
  auto gone = store_->GetJob(refused.id);
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(gone->has_value());
  EXPECT_TRUE(store_->GetJob(kept.id)->has_value());
  ExecRaw("DROP TRIGGER audit_device_full", "DROP TRIGGER audit_device_full ON audit_events");
  EXPECT_TRUE(store_->Write(InsertWithAudit(refused)).ok());
  EXPECT_TRUE(Verify().ok);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::Values("sqlite", "postgresql"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// Replicas starting together on an empty database migrate it once.
TEST(PostgresStoreTest, ReplicasStartingTogetherMigrateOnce) {
  testing::TempDb db("postgresql");
  if (!db.skip().empty()) GTEST_SKIP() << db.skip();
  std::vector<std::thread> starters;
  std::atomic<int> opened{0};
  for (int i = 0; i < 4; ++i) {
    starters.emplace_back([&] {
      auto s = OpenStore(db.url());
      if (s.ok()) ++opened;
      else ADD_FAILURE() << s.status().ToString();
    });
  }
  for (auto& t : starters) t.join();
  EXPECT_EQ(opened.load(), 4);
  auto conn = pg::Conn::Open(db.url());
  ASSERT_TRUE(conn.ok());
  auto versions = (*conn)->Exec("SELECT count(*), max(version) FROM schema_migrations");
  ASSERT_TRUE(versions.ok()) << versions.status().ToString();
  EXPECT_EQ(versions->Int(0, 0), versions->Int(0, 1)) << "each version applied once";
  EXPECT_GE(versions->Int(0, 1), 4);
}

// A server that is down is a retryable error naming the server, never its
// password.
TEST(PostgresStoreTest, AnUnreachableServerIsUnavailableAndThePasswordStaysSecret) {
  auto s = OpenStore("postgresql://causeway:s3cret-pw@127.0.0.1:1/causeway?connect_timeout=2");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Code::kUnavailable);
  EXPECT_EQ(s.status().message().find("s3cret-pw"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("127.0.0.1:1"), std::string::npos) << s.status().message();
}

// The verifier on its own: every kind of tampering is named at the first bad
// sequence number.
// A well-linked chain of `n` events.
std::vector<AuditEvent> Chain(int n) {
  std::vector<AuditEvent> chain;
  std::string prev = audit::kGenesisHash;
  for (int i = 1; i <= n; ++i) {
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
  return chain;
}

TEST(ChainVerifierTest, NamesTheFirstBadEvent) {
  std::vector<AuditEvent> chain = Chain(5);
  audit::ChainHead head{5, chain.back().hash};
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

// On a trail being appended to: events past the head read first are
// accepted up to the head read after; a short chain, a head that does not
// match, or an event beyond the later head are still found.
TEST(ChainVerifierTest, ATrailGrowingWhileReadIsCheckedBetweenTheHeadsBeforeAndAfter) {
  std::vector<AuditEvent> chain = Chain(6);
  std::vector<std::string> hashes = {audit::kGenesisHash};
  for (const AuditEvent& e : chain) hashes.push_back(e.hash);
  auto run = [&](size_t fed, audit::ChainHead before, audit::ChainHead after) {
    audit::ChainVerifier v;
    v.Begin(before);
    for (size_t i = 0; i < fed; ++i) {
      if (!v.Add(chain[i])) break;
    }
    return v.Finish(after);
  };
  // Head at 4 before, 6 after; the scan saw 5 (the sixth came after it passed).
  EXPECT_TRUE(run(5, {4, hashes[4]}, {6, hashes[6]}).ok);
  EXPECT_TRUE(run(6, {4, hashes[4]}, {6, hashes[6]}).ok);
  EXPECT_TRUE(run(4, {4, hashes[4]}, {4, hashes[4]}).ok);
  auto short_of = run(3, {4, hashes[4]}, {4, hashes[4]});
  EXPECT_FALSE(short_of.ok);
  EXPECT_EQ(short_of.first_bad_seq, 4);
  EXPECT_NE(short_of.reason.find("missing from the end"), std::string::npos);
  auto other_head = run(5, {4, hashes[3]}, {5, hashes[5]});
  EXPECT_FALSE(other_head.ok);
  EXPECT_EQ(other_head.first_bad_seq, 4);
  auto beyond = run(6, {4, hashes[4]}, {5, hashes[5]});
  EXPECT_FALSE(beyond.ok);
  EXPECT_NE(beyond.reason.find("added after the recorded head"), std::string::npos);
}

}  // namespace
}  // namespace causeway

namespace causeway {
namespace {

TEST_P(StoreTest, DatasetVersionsAreRegisteredOnceAndReplicasUpdated) {
  DatasetVersion v{"c4", "2024-05", "sha256:" + std::string(64, 'a'), "nebius-eu:c4", "md5", 3, 300, "alice",
                   FromUnixMicros(1'000'000)};
  std::string manifest = "causeway-manifest 1 md5\n" + std::string(32, 'b') + " 100 train/it's \"odd\"\n";
  auto insert = [&](const DatasetVersion& version) {
    return store_->Write([=](WriteTx& tx) -> Status {
      RETURN_IF_ERROR(tx.InsertDatasetVersion(version, manifest));
      AuditEvent e = Event("dataset.register", "dataset/" + version.dataset + "@" + version.version);
      return tx.AppendAudit(e);
    });
  };
  ASSERT_TRUE(insert(v).ok());
  // The same label again, or the same contents under another label.
  DatasetVersion same_label = v;
  same_label.digest = "sha256:" + std::string(64, 'c');
  EXPECT_EQ(insert(same_label).code(), Code::kAlreadyExists);
  DatasetVersion same_digest = v;
  same_digest.version = "2024-06";
  EXPECT_EQ(insert(same_digest).code(), Code::kAlreadyExists);
  DatasetVersion other = same_label;
  other.dataset = "imagenet";
  other.registered_at = FromUnixMicros(2'000'000);
  ASSERT_TRUE(insert(other).ok());

  auto all = store_->ListDatasetVersions("");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].dataset, "c4");
  EXPECT_EQ((*all)[0].objects, 3);
  EXPECT_EQ((*all)[0].bytes, 300);
  EXPECT_EQ((*all)[0].registered_at, v.registered_at);
  EXPECT_EQ(store_->ListDatasetVersions("imagenet")->size(), 1u);
  EXPECT_EQ(**store_->GetDatasetManifest(v.digest), manifest);
  EXPECT_FALSE(store_->GetDatasetManifest("sha256:none")->has_value());

  DatasetReplica r{v.digest, "coreweave-us", "c4/2024-05", "copying", 0, "", std::nullopt, FromUnixMicros(3'000'000)};
  auto put = [&](const DatasetReplica& replica) {
    return store_->Write([=](WriteTx& tx) -> Status {
      RETURN_IF_ERROR(tx.PutDatasetReplica(replica));
      AuditEvent e = Event("dataset.replicate", "dataset/c4@2024-05");
      return tx.AppendAudit(e);
    });
  };
  ASSERT_TRUE(put(r).ok());
  r.state = "verified";
  r.bytes_moved = 300;
  r.verified_at = FromUnixMicros(4'000'000);
  ASSERT_TRUE(put(r).ok());
  auto replicas = store_->ListDatasetReplicas(v.digest);
  ASSERT_TRUE(replicas.ok());
  ASSERT_EQ(replicas->size(), 1u);
  EXPECT_EQ((*replicas)[0].state, "verified");
  EXPECT_EQ((*replicas)[0].bytes_moved, 300);
  EXPECT_EQ((*replicas)[0].verified_at, r.verified_at);
  EXPECT_EQ((*replicas)[0].path, "c4/2024-05");
  EXPECT_TRUE(store_->ListDatasetReplicas(other.digest)->empty());
  EXPECT_EQ(store_->ListDatasetReplicas("")->size(), 1u);
  EXPECT_FALSE((*replicas)[0].charged_until);

  // Storage is charged from the first charged_until on: writing the replica
  // again keeps it, and only a compare-and-set moves it.
  r.charged_until = FromUnixMicros(4'000'000);
  ASSERT_TRUE(put(r).ok());
  r.charged_until = FromUnixMicros(9'000'000);
  r.state = "corrupt";
  ASSERT_TRUE(put(r).ok());
  EXPECT_EQ(store_->ListDatasetReplicas(v.digest)->at(0).charged_until, FromUnixMicros(4'000'000));
  auto advance = [&](int64_t from, int64_t to) {
    auto moved = std::make_shared<bool>(false);
    Status st = store_->Write([=](WriteTx& tx) -> Status {
      ASSIGN_OR_RETURN(*moved, tx.AdvanceReplicaCharge(v.digest, "coreweave-us", FromUnixMicros(from),
                                                       FromUnixMicros(to)));
      AuditEvent e = Event("dataset.storage", "datasets");
      return tx.AppendAudit(e);
    });
    EXPECT_TRUE(st.ok()) << st.ToString();
    return *moved;
  };
  EXPECT_TRUE(advance(4'000'000, 8'000'000));
  EXPECT_FALSE(advance(4'000'000, 8'000'000));  // charged already
  EXPECT_FALSE(advance(7'000'000, 9'000'000));
  auto after = store_->ListDatasetReplicas(v.digest);
  EXPECT_EQ(after->at(0).charged_until, FromUnixMicros(8'000'000));
  EXPECT_EQ(after->at(0).state, "corrupt");
  EXPECT_TRUE(Verify().ok);
}

}  // namespace
}  // namespace causeway
