// Tampering with the audit table directly in the SQLite file is detected by
// `causeway audit verify`, which names the first bad sequence number.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "store/audit_chain.h"
#include "causeway/store.h"
#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

// `db` copied to `copy` with `sql` applied to the copy; the copy's path.
std::string CopyWith(const std::string& db, const std::string& copy, const std::string& sql) {
  std::filesystem::copy_file(db, copy, std::filesystem::copy_options::overwrite_existing);
  sqlite3* h = nullptr;
  EXPECT_EQ(sqlite3_open(copy.c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(h);
  return copy;
}

class TamperTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("tamper");
    // No scheduling cycle after the first: the chain holds exactly the
    // events below, whatever the timing.
    auto server = ServerProcess::Start(dir_->path(), {"--tick-ms", "3600000"});
    auto client = server->Client();
    // 1 scheduler.lead + 1 token.create (bootstrap) + 6 job.submit = 8
    // events.
    for (int i = 0; i < 6; ++i) {
      auto r = client.Send("POST", "/v1/jobs", json{{"spec", "name: t" + std::to_string(i) +
                                                        "\nresources: {accelerators: L4:1, labels: {owner: o, team: research}}\n"}}.dump(),
                           Auth(server->admin_token()));
      ASSERT_EQ(r->status, 201) << r->body;
    }
    server->Stop(SIGTERM);
  }
  static void TearDownTestSuite() { delete dir_; }

  // A copy of the pristine database with `sql` applied to it.
  std::string TamperedCopy(const std::string& sql) {
    return CopyWith(dir_->path() + "/causeway.db",
                    dir_->path() + "/" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db", sql);
  }

  static void ExpectBrokenAt(const std::string& db, int seq) {
    auto r = RunCli({"audit", "verify", "--db", db});
    EXPECT_EQ(r.exit_code, 8) << r.out << r.err;
    EXPECT_NE(r.out.find("broken at seq " + std::to_string(seq) + ":"), std::string::npos) << r.out;
    auto j = RunCli({"--json", "audit", "verify", "--db", db});
    EXPECT_EQ(j.exit_code, 8);
    json report = json::parse(j.out);
    EXPECT_FALSE(report["ok"].get<bool>());
    EXPECT_EQ(report["first_bad_seq"], seq);
  }

  static TempDir* dir_;
};
TempDir* TamperTest::dir_ = nullptr;

TEST_F(TamperTest, PristineChainVerifies) {
  auto r = RunCli({"audit", "verify", "--db", dir_->path() + "/causeway.db"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ok: 8 events"), std::string::npos) << r.out;
}

TEST_F(TamperTest, EditedActor) { ExpectBrokenAt(TamperedCopy("UPDATE audit_events SET actor='mallory' WHERE seq=3"), 3); }

TEST_F(TamperTest, EditedDetails) {
  ExpectBrokenAt(TamperedCopy("UPDATE audit_events SET details='{\"name\":\"innocent\"}' WHERE seq=4"), 4);
}

TEST_F(TamperTest, EditedTime) { ExpectBrokenAt(TamperedCopy("UPDATE audit_events SET time=time+1 WHERE seq=6"), 6); }

TEST_F(TamperTest, DeletedMiddleEvent) { ExpectBrokenAt(TamperedCopy("DELETE FROM audit_events WHERE seq=2"), 2); }

TEST_F(TamperTest, DeletedLastEvents) { ExpectBrokenAt(TamperedCopy("DELETE FROM audit_events WHERE seq>=6"), 6); }

TEST_F(TamperTest, ReorderedEvents) {
  ExpectBrokenAt(TamperedCopy("UPDATE audit_events SET seq=-1 WHERE seq=2;"
                              "UPDATE audit_events SET seq=2 WHERE seq=5;"
                              "UPDATE audit_events SET seq=5 WHERE seq=-1;"),
                 2);
}

TEST_F(TamperTest, InsertedEventInTheMiddle) {
  ExpectBrokenAt(TamperedCopy("UPDATE audit_events SET seq=seq+100 WHERE seq>=3;"
                              "UPDATE audit_events SET seq=seq-99 WHERE seq>=103;"
                              "INSERT INTO audit_events SELECT 3, time, actor, 'job.cancel', resource, details, hash, hash "
                              "FROM audit_events WHERE seq=2;"),
                 3);
}

TEST_F(TamperTest, AppendedEventBeyondTheHead) {
  ExpectBrokenAt(TamperedCopy("INSERT INTO audit_events SELECT 9, time, actor, action, resource, details, hash, hash "
                              "FROM audit_events WHERE seq=8;"),
                 9);
}

TEST_F(TamperTest, RehashedEditBreaksTheNextLink) {
  // Recomputing one event's hash is not enough: the next event still points
  // at the old one.
  ExpectBrokenAt(TamperedCopy("UPDATE audit_events SET hash='" + std::string(64, 'a') + "' WHERE seq=2"), 2);
}


// Fail closed: when the audit event of a change cannot be written (here the
// database refuses every insert into the audit table, as a full audit device
// would), the change itself is refused and nothing of it is kept; once the
// audit trail can be written again, so can everything else.
// Someone with the database rewrites history and recomputes every later
// hash: the chain alone then verifies, but the signed checkpoint does not,
// checked with the public key alone.
TEST(CheckpointTest, ARewrittenHistoryIsCaughtBySignedCheckpointsWithThePublicKeyAlone) {
  TempDir dir("checkpoint");
  auto server = ServerProcess::Start(dir.path(), {"--tick-ms", "3600000", "--audit-checkpoint-interval", "0"});
  std::map<std::string, std::string> env = {{"CAUSEWAY_SERVER", server->url()}, {"CAUSEWAY_TOKEN", server->admin_token()}};
  auto client = server->Client();
  auto submit = [&](int i) {
    auto r = client.Send("POST", "/v1/jobs", json{{"spec", "name: c" + std::to_string(i) +
                                                      "\nresources: {accelerators: L4:1, labels: {owner: o, team: research}}\n"}}.dump(),
                         Auth(server->admin_token()));
    ASSERT_EQ(r->status, 201) << r->body;
  };
  for (int i = 0; i < 3; ++i) submit(i);
  auto signed_now = RunCli({"audit", "checkpoint"}, env);
  ASSERT_EQ(signed_now.exit_code, 0) << signed_now.err;
  EXPECT_NE(signed_now.out.find("signed seq "), std::string::npos) << signed_now.out;
  EXPECT_NE(RunCli({"audit", "checkpoint"}, env).out.find("nothing new"), std::string::npos);
  auto keys = RunCli({"audit", "keys"}, env);
  ASSERT_EQ(keys.exit_code, 0) << keys.err;
  json jwks = json::parse(keys.out);
  ASSERT_EQ(jwks["keys"].size(), 1u);
  EXPECT_EQ(jwks["keys"][0]["alg"], "ES256");
  EXPECT_FALSE(jwks["keys"][0].contains("d"));  // the public half only
  std::string key_file = dir.path() + "/audit-keys.json";
  std::ofstream(key_file) << keys.out;
  submit(3);  // after the checkpoint: unsigned so far
  auto online = RunCli({"--json", "audit", "verify"}, env);
  EXPECT_EQ(json::parse(online.out)["checkpoints"], 1) << online.out;
  server->Stop(SIGTERM);

  std::string db = dir.path() + "/causeway.db";
  auto pristine = RunCli({"audit", "verify", "--db", db, "--public-key", key_file});
  EXPECT_EQ(pristine.exit_code, 0) << pristine.out << pristine.err;
  EXPECT_NE(pristine.out.find("1 signed checkpoints verified"), std::string::npos) << pristine.out;

  // The rewrite: seq 3's actor changed, every hash from there recomputed.
  std::vector<AuditEvent> events;
  {
    auto store = OpenSqliteStore(db);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->ScanAudit([&](const AuditEvent& e) {
      events.push_back(e);
      return true;
    }).ok());
  }
  std::string sql = "BEGIN;";
  std::string prev = events[1].hash;
  for (size_t i = 2; i < events.size(); ++i) {
    AuditEvent& e = events[i];
    if (e.seq == 3) e.actor = "mallory";
    e.prev_hash = prev;
    e.hash = audit::ComputeHash(e);
    prev = e.hash;
    sql += "UPDATE audit_events SET actor = '" + e.actor + "', prev_hash = '" + e.prev_hash + "', hash = '" + e.hash +
           "' WHERE seq = " + std::to_string(e.seq) + ";";
  }
  sql += "UPDATE audit_head SET hash = '" + prev + "';COMMIT;";
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(raw);

  auto rewritten = RunCli({"--json", "audit", "verify", "--db", db, "--public-key", key_file});
  EXPECT_EQ(rewritten.exit_code, 8) << rewritten.out << rewritten.err;
  json report = json::parse(rewritten.out);
  EXPECT_FALSE(report.contains("first_bad_seq")) << report;  // the chain itself is consistent again
  EXPECT_NE(report["checkpoint_error"].get<std::string>().find("is not the chain's"), std::string::npos) << report;
  auto human = RunCli({"audit", "verify", "--db", db, "--public-key", key_file});
  EXPECT_NE(human.out.find("chain intact, but checkpoint at seq"), std::string::npos) << human.out;
  // A key file that is not a key is refused, naming it.
  std::ofstream(dir.path() + "/bad.json") << "[1]";
  auto bad = RunCli({"audit", "verify", "--db", db, "--public-key", dir.path() + "/bad.json"});
  EXPECT_EQ(bad.exit_code, 3) << bad.err;
  EXPECT_NE(bad.err.find("bad.json"), std::string::npos) << bad.err;
}

TEST(FailClosedTest, AChangeWhoseAuditEventCannotBeWrittenIsRefused) {
  TempDir dir("fail-closed");
  auto server = ServerProcess::Start(dir.path(), {"--tick-ms", "3600000"});
  auto client = server->Client();
  const std::string spec = "name: t\nresources: {accelerators: L4:1, labels: {owner: o, team: research}}\n";
  auto submit = [&] { return client.Send("POST", "/v1/jobs", json{{"spec", spec}}.dump(), Auth(server->admin_token())); };
  auto first = submit();
  ASSERT_EQ(first->status, 201) << first->body;
  std::string job = json::parse(first->body)["job"]["id"];

  auto sql = [&](const std::string& statement) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir.path() + "/causeway.db").c_str(), &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, statement.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  };
  auto count = [&](const std::string& query) {
    sqlite3* db = nullptr;
    sqlite3_open((dir.path() + "/causeway.db").c_str(), &db);
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db, query.c_str(), -1, &s, nullptr);
    sqlite3_step(s);
    int64_t n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return n;
  };
  sql("CREATE TRIGGER audit_device_full BEFORE INSERT ON audit_events BEGIN SELECT RAISE(ABORT, 'audit device full'); END");
  int64_t jobs = count("SELECT count(*) FROM jobs");
  int64_t events = count("SELECT count(*) FROM audit_events");

  auto refused = submit();
  EXPECT_EQ(refused->status, 503) << refused->body;  // retryable: the trail may come back
  EXPECT_EQ(json::parse(refused->body)["error"]["code"], "unavailable");
  auto cancel = client.Send("POST", "/v1/jobs/" + job + "/cancel", "{}", Auth(server->admin_token()));
  EXPECT_GE(cancel->status, 500) << cancel->body;
  auto token = client.Send("POST", "/v1/tokens", json{{"name", "x"}, {"scopes", {"jobs:read"}}}.dump(),
                           Auth(server->admin_token()));
  EXPECT_GE(token->status, 500) << token->body;
  EXPECT_EQ(json::parse(token->body).value("secret", ""), "");  // no token handed out
  EXPECT_EQ(count("SELECT count(*) FROM jobs"), jobs);
  EXPECT_EQ(count("SELECT count(*) FROM audit_events"), events);
  EXPECT_EQ(count("SELECT count(*) FROM api_tokens WHERE name = 'x'"), 0);
  auto still = client.Send("GET", "/v1/jobs/" + job, "", Auth(server->admin_token()));
  EXPECT_EQ(json::parse(still->body)["state"], "pending");

  sql("DROP TRIGGER audit_device_full");
  EXPECT_EQ(submit()->status, 201);
  EXPECT_EQ(client.Send("POST", "/v1/jobs/" + job + "/cancel", "{}", Auth(server->admin_token()))->status, 200);
  auto verify = RunCli({"audit", "verify", "--data-dir", dir.path()});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

// Imported provider events are committed to by their import's chain event:
// editing, deleting or adding one behind the import's back is found by
// `audit verify`, though no event of the chain changed. An event id seen in
// an earlier import with other content is reported and both are kept.
TEST(ImportTamperTest, ImportedEventsAreCoveredByVerifyAndConflictsAcrossImportsAreKeptAndReported) {
  TempDir dir("tamper-imports");
  auto server = ServerProcess::Start(dir.path(), {"--tick-ms", "3600000"});
  auto client = server->Client();
  auto okta = [](const std::string& id, const std::string& result) {
    return json{{"uuid", id}, {"published", "2026-11-30T08:00:00Z"}, {"eventType", "user.session.start"},
                {"actor", {{"alternateId", "a@corp.example"}}}, {"client", {{"ipAddress", "192.0.2.1"}}},
                {"outcome", {{"result", result}}}}.dump();
  };
  auto import = [&](const std::string& body, const std::string& name) {
    auto r = client.Send("POST", "/v1/audit/imports?source=okta&provider=okta&name=" + name, body,
                         Auth(server->admin_token()));
    EXPECT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
    return json::parse(r->body);
  };
  json first = import(okta("u1", "SUCCESS") + "\n" + okta("u2", "SUCCESS") + "\n" + okta("u3", "SUCCESS") + "\n", "day1.jsonl");
  EXPECT_EQ(first["stored"], 3);
  // The same file again stores nothing; another with u2 changed keeps both.
  EXPECT_EQ(import(okta("u1", "SUCCESS") + "\n", "day1-again.jsonl")["already_stored"], 1);
  json second = import(okta("u2", "FAILURE") + "\n" + okta("u4", "SUCCESS") + "\n", "day2.jsonl");
  EXPECT_EQ(second["conflicts"], 1) << second.dump(2);
  EXPECT_EQ(second["stored"], 2) << second.dump(2);
  ASSERT_EQ(second["first_issues"].size(), 1u) << second.dump(2);
  EXPECT_NE(second["first_issues"][0]["reason"].get<std::string>().find("both are kept"), std::string::npos);
  server->Stop(SIGTERM);

  const std::string db = dir.path() + "/causeway.db";
  auto rows = [&](const std::string& where) {
    sqlite3* h = nullptr;
    sqlite3_open(db.c_str(), &h);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(h, ("SELECT count(*) FROM imported_audit WHERE " + where).c_str(), -1, &st, nullptr);
    sqlite3_step(st);
    int64_t n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return n;
  };
  EXPECT_EQ(rows("source_id LIKE 'u2%'"), 2) << "both versions of u2 are kept";
  auto pristine = RunCli({"--json", "audit", "verify", "--db", db});
  ASSERT_EQ(pristine.exit_code, 0) << pristine.out << pristine.err;
  EXPECT_EQ(json::parse(pristine.out)["imported_events"], 5);

  auto tampered = [&](const std::string& name, const std::string& sql) {
    std::string copy = CopyWith(db, dir.path() + "/" + name + ".db", sql);
    auto r = RunCli({"--json", "audit", "verify", "--db", copy});
    EXPECT_EQ(r.exit_code, 8) << name << ": " << r.out << r.err;
    json report = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(report.value("ok", true)) << name;
    EXPECT_FALSE(report.contains("first_bad_seq")) << name << ": the chain itself is intact";
    EXPECT_NE(report.value("import_error", "").find("okta/okta"), std::string::npos) << name << ": " << r.out;
    auto human = RunCli({"audit", "verify", "--db", copy});
    EXPECT_NE(human.out.find("chain intact, but"), std::string::npos) << human.out;
  };
  tampered("edited", "UPDATE imported_audit SET actor = 'someone-else' WHERE source_id = 'u1'");
  tampered("edited-event", "UPDATE imported_audit SET event = replace(event, 'a@corp.example', 'b@corp.example') WHERE source_id = 'u3'");
  tampered("deleted", "DELETE FROM imported_audit WHERE source_id = 'u4'");
  tampered("all-deleted", "DELETE FROM imported_audit");
  tampered("added", "INSERT INTO imported_audit (provider, source, source_id, time_ms, class_uid, activity, operation, "
                    "actor, subject, resource, status_id, event, imported_at) SELECT provider, source, 'u9', time_ms, "
                    "class_uid, activity, operation, actor, subject, resource, status_id, event, imported_at + 7 "
                    "FROM imported_audit WHERE source_id = 'u1'");
}

}  // namespace
}  // namespace causeway::testing
