// ServingService against a real store and the embedded (simulated) estate,
// with no scheduler and no HAProxy: what bringing a service up checks and
// writes, how a pass submits its replicas as jobs of the service's own
// actor at their places (in the same unit as the service's record), and
// how taking it down ends them and removes it. The data plane and the
// failover itself are tested against real processes
// (tests/integration/haproxy_test.cc).
#include <stdlib.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "service/job_service.h"
#include "service/serving_service.h"
#include "unit/service/service_fixture.h"

namespace causeway::testing {
namespace {

std::string ChatService() {
  std::ifstream in(std::string(CAUSEWAY_SOURCE_DIR) + "/examples/services/chat.yaml");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

identity::Principal Person(const std::string& user, const std::string& role, const std::string& team) {
  identity::Principal p;
  p.token_id = "tok_" + user.substr(0, user.find('@'));
  p.user = user;
  identity::Grant g;
  g.role = role;
  g.team = team;
  g.scopes = {std::string(identity::kScopeJobsRead), std::string(identity::kScopeJobsWrite)};
  p.grants = {g};
  p.scopes = g.scopes;
  return p;
}

class ServingServiceTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    jobs_ = std::make_unique<JobService>(*store_, *queue_, *estate_, clock_);
    serving_ = std::make_unique<ServingService>(
        *store_, *queue_, *jobs_, *estate_, clock_,
        ServingService::Options{.haproxy = dir_.path() + "/no-haproxy", .runtime_dir = dir_.path()});
  }
  void TearDown() override {
    serving_.reset();
    ServiceTest::TearDown();
  }
  Result<ServiceRecord> Up(const std::string& yaml, const identity::Principal& who = Admin(), std::string name = "") {
    UpRequest r;
    r.spec_yaml = yaml;
    r.file = "chat.yaml";
    r.name = std::move(name);
    return serving_->Up(who, r);
  }
  ServiceRecord Stored(const std::string& name) {
    auto e = store_->FindDirectoryEntryByName(std::string(kServiceKind), name);
    EXPECT_TRUE(e.ok() && *e) << name;
    auto r = FromEntry(**e);
    EXPECT_TRUE(r.ok());
    return *r;
  }
  // Passes until `done` holds, at most 20. Each pass's writes are queued;
  // an empty unit run after them returns once they are durable (the queue
  // commits in order), so the next pass sees them: no waiting on time.
  template <typename F>
  bool PassUntil(F done) {
    for (int i = 0; i < 20; ++i) {
      serving_->Pass();
      EXPECT_TRUE(queue_->Run([](WriteTx&) { return Status::Ok(); }).ok());
      if (done()) return true;
    }
    return false;
  }

  // Where proxies would keep their files (none starts: no binary there).
  struct Dir {
    Dir() {
      char tmpl[] = "/tmp/cw-serving-XXXXXX";
      path_ = ::mkdtemp(tmpl) ? tmpl : "/tmp";
    }
    ~Dir() { std::filesystem::remove_all(path_); }
    const std::string& path() const { return path_; }
    std::string path_;
  } dir_;
  std::unique_ptr<JobService> jobs_;
  std::unique_ptr<ServingService> serving_;
};

TEST_F(ServingServiceTest, UpChecksTheTaskAtEveryPlaceItsReplicasMayRunAndRefusesWhatIsNoService) {
  const std::string chat = ChatService();
  auto no_service = Up("name: chat\nresources: {accelerators: A100-80GB:1, labels: {team: vision, owner: bob@example.com}}\n"
                       "run: serve\n");
  EXPECT_EQ(no_service.status().code(), Code::kInvalidArgument);
  EXPECT_NE(no_service.status().message().find("no `service:` section"), std::string::npos) << no_service.status().ToString();
  auto pool = Up("name: workers\nresources: {labels: {team: vision, owner: bob@example.com}}\nrun: work\n"
                 "service: {pool: {workers: 2}}\n");
  EXPECT_EQ(pool.status().code(), Code::kInvalidArgument) << pool.status().ToString();
  EXPECT_NE(pool.status().message().find("pool of batch workers"), std::string::npos) << pool.status().ToString();
  std::string tls = chat;
  tls.replace(tls.find("  load_balancing_policy:"), 0, "  tls: {keyfile: k.pem, certfile: c.pem}\n");
  EXPECT_NE(Up(tls).status().message().find("service.tls is not served yet"), std::string::npos) << Up(tls).status().ToString();
  EXPECT_EQ(Up(chat, Admin(), "Chat_Bot").status().code(), Code::kInvalidArgument);
  // A spec asking for more than one service may hold is refused before
  // anything is decided (a controller asked for 100,000 replicas would
  // otherwise build that many actions).
  std::string many = chat;
  many.replace(many.find("replicas: 2"), std::string("replicas: 2").size(), "replicas: 100000");
  auto huge = Up(many);
  EXPECT_EQ(huge.status().code(), Code::kInvalidArgument);
  EXPECT_NE(huge.status().message().find("at most 32"), std::string::npos) << huge.status().ToString();

  // The alternate's own GPU where its place has none: refused, naming it.
  std::string nowhere = chat;
  nowhere.replace(nowhere.find("alternate: {place: gcp-us-a100, warm: 1}"),
                  std::string("alternate: {place: gcp-us-a100, warm: 1}").size(),
                  "alternate: {place: gcp-us-a100, accelerators: H200:1, warm: 1}");
  auto alt = Up(nowhere);
  EXPECT_FALSE(alt.ok());
  EXPECT_NE(alt.status().message().find("alternate replicas (on gcp-us-a100)"), std::string::npos) << alt.status().ToString();

  // A person submits as themselves, to a team a role of theirs covers.
  auto other_team = Up(chat, Person("dan@example.com", "researcher", "nlp"));
  EXPECT_EQ(other_team.status().code(), Code::kPermissionDenied) << other_team.status().ToString();
  auto other_owner = Up(chat, Person("carol@example.com", "researcher", "vision"));
  EXPECT_EQ(other_owner.status().code(), Code::kPermissionDenied) << other_owner.status().ToString();
  EXPECT_TRUE(Audit("service.").empty()) << "nothing refused is written";

  auto up = Up(chat);
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  EXPECT_EQ(up->name, "chat");
  EXPECT_EQ(up->team, "vision");
  EXPECT_EQ(up->owner, "bob@example.com");
  EXPECT_GT(up->endpoint_port, 0);
  EXPECT_EQ(Up(chat).status().code(), Code::kAlreadyExists);
  auto events = Audit("service.up");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].resource, "service/chat");
  EXPECT_EQ(events[0].details.String("alternate"), "gcp-us-a100");
}

TEST_F(ServingServiceTest, APassSubmitsItsReplicasAsJobsOfTheServiceAtTheirPlacesOnceEach) {
  ASSERT_TRUE(Up(ChatService()).ok());
  // Two preferred replicas and the warm alternate; none twice, whatever
  // the passes in between (no scheduler runs them here).
  ASSERT_TRUE(PassUntil([&] { return Stored("chat").replicas.size() == 3; }));
  for (int i = 0; i < 5; ++i) serving_->Pass();
  const ServiceRecord r = Stored("chat");
  ASSERT_EQ(r.replicas.size(), 3u);
  std::map<std::string, int> roles;
  std::set<int> ports;
  for (const ReplicaRef& x : r.replicas) {
    ++roles[std::string(serving::ToString(x.role))];
    ports.insert(x.port);
    auto job = store_->GetJob(x.job);
    ASSERT_TRUE(job.ok() && *job);
    EXPECT_EQ((*job)->submitted_by, "service/chat");
    EXPECT_EQ((*job)->team, "vision");
    EXPECT_EQ((*job)->owner, "bob@example.com");
    auto spec = nlohmann::json::parse((*job)->spec_json);
    EXPECT_EQ(spec["labels"]["service"], "chat");
    EXPECT_EQ(spec["labels"]["service-role"], serving::ToString(x.role));
    EXPECT_EQ(spec["cloud"], x.role == serving::Role::kPreferred ? "coreweave" : "gcp") << spec.dump();
    EXPECT_EQ(spec["envs"]["CAUSEWAY_REPLICA_PORT"], std::to_string(x.port));
  }
  EXPECT_EQ(roles, (std::map<std::string, int>{{"alternate", 1}, {"preferred", 2}}));
  EXPECT_EQ(ports.size(), 3u) << "each replica its own port";
  EXPECT_EQ(Audit("job.submit").size(), 3u);
  for (const AuditEvent& e : Audit("job.submit")) EXPECT_EQ(e.actor, "service/chat");
  auto shown = serving_->Get(Admin(), "chat");
  ASSERT_TRUE(shown.ok());
  EXPECT_EQ(shown->replicas.size(), 3u);
  EXPECT_EQ(shown->replicas[0].state, "pending");
  EXPECT_EQ(shown->preferred_provider, "coreweave");
  EXPECT_NE(shown->proxy.find("not running"), std::string::npos) << shown->proxy;
  // Another team's people do not see it at all.
  EXPECT_EQ(serving_->Get(Person("dan@example.com", "researcher", "nlp"), "chat").status().code(), Code::kNotFound);
  auto listed = serving_->List(Person("dan@example.com", "researcher", "nlp"));
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
}

TEST_F(ServingServiceTest, DownEndsEveryReplicaThenRemovesTheService) {
  ASSERT_TRUE(Up(ChatService()).ok());
  ASSERT_TRUE(PassUntil([&] { return Stored("chat").replicas.size() == 3; }));
  const ServiceRecord before = Stored("chat");
  // Only its owner (or the team's jobs:manage) takes it down.
  EXPECT_EQ(serving_->Down(Person("carol@example.com", "researcher", "vision"), "chat").status().code(),
            Code::kPermissionDenied);
  EXPECT_EQ(serving_->Down(Person("dan@example.com", "researcher", "nlp"), "chat").status().code(), Code::kNotFound);
  ASSERT_TRUE(serving_->Down(Person("bob@example.com", "researcher", "vision"), "chat").ok());
  EXPECT_EQ(serving_->Down(Admin(), "chat").status().code(), Code::kFailedPrecondition);
  ASSERT_TRUE(PassUntil([&] {
    auto e = store_->FindDirectoryEntryByName(std::string(kServiceKind), "chat");
    return e.ok() && !*e;
  }));
  for (const ReplicaRef& x : before.replicas) {
    auto job = store_->GetJob(x.job);
    ASSERT_TRUE(job.ok() && *job);
    EXPECT_EQ((*job)->state, JobState::kCancelled) << x.job;
  }
  EXPECT_EQ(Audit("service.replica_end").size(), 3u);
  EXPECT_EQ(Audit("service.removed").size(), 1u);
  EXPECT_EQ(serving_->Get(Admin(), "chat").status().code(), Code::kNotFound);
  // The name is free again.
  EXPECT_TRUE(Up(ChatService()).ok());
}

TEST_F(ServingServiceTest, UpdateGivesANewRevisionWhoseReplicasStartBesideTheOldOnes) {
  const std::string chat = ChatService();
  ASSERT_TRUE(Up(chat).ok());
  ASSERT_TRUE(PassUntil([&] { return Stored("chat").replicas.size() == 3; }));
  std::string next = chat;
  next.replace(next.find("--model Qwen/Qwen2.5-1.5B-Instruct"), std::string("--model Qwen/Qwen2.5-1.5B-Instruct").size(),
               "--model Qwen/Qwen2.5-3B-Instruct");
  auto update = [&](const std::string& yaml, const identity::Principal& who, std::string mode = "rolling") {
    return serving_->Update(who, "chat", UpdateRequest{yaml, "chat-v2.yaml", std::move(mode)});
  };
  // Who may: the owner or the team's jobs:manage; the new revision is
  // checked as at up; the endpoint's proxy, team and owner stay.
  EXPECT_EQ(update(next, Person("carol@example.com", "researcher", "vision")).status().code(), Code::kPermissionDenied);
  EXPECT_EQ(update(next, Person("dan@example.com", "researcher", "nlp")).status().code(), Code::kNotFound);
  EXPECT_EQ(serving_->Update(Admin(), "nope", UpdateRequest{next}).status().code(), Code::kNotFound);
  EXPECT_EQ(update(next, Admin(), "canary").status().code(), Code::kInvalidArgument);
  std::string policy = next;
  policy.replace(policy.find("round_robin"), std::string("round_robin").size(), "least_load");
  auto proxy = update(policy, Admin());
  EXPECT_EQ(proxy.status().code(), Code::kInvalidArgument);
  EXPECT_NE(proxy.status().message().find("changes the endpoint's proxy"), std::string::npos) << proxy.status().ToString();
  std::string team = next;
  team.replace(team.find("team: vision"), std::string("team: vision").size(), "team: nlp");
  auto moved = update(team, Admin());
  EXPECT_EQ(moved.status().code(), Code::kInvalidArgument) << moved.status().ToString();
  EXPECT_NE(moved.status().message().find("keeps its team and owner"), std::string::npos) << moved.status().ToString();
  std::string no_service = next.substr(0, next.find("service:"));
  EXPECT_EQ(update(no_service, Admin()).status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(Audit("service.update").empty()) << "nothing refused is written";

  auto done = update(next, Person("bob@example.com", "researcher", "vision"), "blue_green");
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->revision, 2);
  EXPECT_EQ(done->update_mode, "blue_green");
  auto events = Audit("service.update");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].actor, "tok_bob");
  EXPECT_EQ(events[0].details.Int("from_revision"), 1);
  EXPECT_EQ(events[0].details.Int("revision"), 2);
  // Its replicas of revision 2 are submitted; the old ones, which serve
  // nothing here (no scheduler runs them), leave.
  ASSERT_TRUE(PassUntil([&] {
    const ServiceRecord r = Stored("chat");
    return r.replicas.size() == 3 &&
           std::all_of(r.replicas.begin(), r.replicas.end(), [](const ReplicaRef& x) { return x.revision == 2; });
  }));
  for (const ReplicaRef& x : Stored("chat").replicas) {
    auto job = store_->GetJob(x.job);
    ASSERT_TRUE(job.ok() && *job);
    EXPECT_NE((*job)->spec_json.find("Qwen2.5-3B"), std::string::npos) << (*job)->spec_json;
  }
  EXPECT_EQ(Audit("service.replica_end").size(), 3u);
  EXPECT_EQ(Audit("job.submit").size(), 6u);
}

TEST(ServiceRecordTest, ReadsBackAsWritten) {
  ServiceRecord r;
  r.id = "svc_1";
  r.name = "chat";
  r.team = "vision";
  r.owner = "bob@example.com";
  r.created_by = "tok_bob";
  r.file = "chat.yaml";
  r.spec_yaml = "name: chat\n";
  r.endpoint_port = 8000;
  r.up = false;
  r.revision = 3;
  r.update_mode = "blue_green";
  r.replicas = {{"job_1", serving::Role::kPreferred, 9001, 2}, {"job_2", serving::Role::kAlternate, 9002, 3}};
  r.version = 4;
  auto back = FromEntry(ToEntry(r));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->name, "chat");
  EXPECT_EQ(back->owner, "bob@example.com");
  EXPECT_FALSE(back->up);
  ASSERT_EQ(back->replicas.size(), 2u);
  EXPECT_EQ(back->replicas[1].role, serving::Role::kAlternate);
  EXPECT_EQ(back->replicas[1].port, 9002);
  EXPECT_EQ(back->replicas[0].revision, 2);
  EXPECT_EQ(back->revision, 3);
  EXPECT_EQ(back->update_mode, "blue_green");
  EXPECT_EQ(back->version, 4);
  DirectoryEntry bad = ToEntry(r);
  bad.resource = "[1]";
  EXPECT_EQ(FromEntry(bad).status().code(), Code::kInternal);
}

}  // namespace
}  // namespace causeway::testing
