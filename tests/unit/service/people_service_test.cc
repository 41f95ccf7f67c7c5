// PeopleService::Sync against a real store and fake cluster accounts: a
// person who may work gets an account in each team they submit to; a
// leaver loses their tokens, queued work and accounts, each step recorded
// with the number of the audit event its own commit appended.
#include "service/people_service.h"

#include <fstream>
#include <sstream>

#include "fakes/people_accounts.h"
#include "identity/scim/scim_schema.h"
#include "service/scim_service.h"
#include "service/token_service.h"
#include "unit/service/service_fixture.h"
#include "service/reports_json.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

class PeopleServiceTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    // Every simulated provider keeps people's accounts, one cluster each.
    kinds_ = providers::BuiltInKinds();
    providers::Kind sim = *kinds_.Find("sim");
    sim.people_accounts = [ledger = ledger_](const providers::Context& c) {
      std::vector<std::unique_ptr<providers::PeopleAccounts>> out;
      out.push_back(std::make_unique<FakePeopleAccounts>(c.provider.name + "-login", ledger));
      return out;
    };
    kinds_.Replace("sim", std::move(sim));
    binding_.group = "ml-nlp";
    binding_.role = "researcher";
    binding_.team = "nlp";
    binding_.source = "access[0]";
    jobs_ = std::make_unique<JobService>(*store_, *queue_, *estate_, clock_);
    people_ = std::make_unique<PeopleService>(
        *store_, *queue_, *estate_, clock_, *jobs_, [this] { return std::vector<identity::Binding>{binding_}; },
        [this](const std::string& id) { forgotten_.push_back(id); }, kinds_);
    scim_ = std::make_unique<ScimService>(*store_, *queue_, clock_);
    auto user = scim_->Create(identity::scim::UserType(),
                              {{"schemas", {"urn:ietf:params:scim:schemas:core:2.0:User"}},
                               {"userName", "alice@example.com"},
                               {"active", true}},
                              ScimCaller{"tok_idp", "", false});
    ASSERT_TRUE(user.ok()) << user.status().ToString();
    auto group = scim_->Create(identity::scim::GroupType(),
                               {{"schemas", {"urn:ietf:params:scim:schemas:core:2.0:Group"}},
                                {"displayName", "ml-nlp"},
                                {"members", {{{"value", (*user)["id"]}}}}},
                               ScimCaller{"tok_idp", "", false});
    ASSERT_TRUE(group.ok()) << group.status().ToString();
  }
  // The accounts of `user` on every fake cluster.
  std::map<std::string, std::set<std::string>> AccountsOf(const std::string& user) {
    std::lock_guard<std::mutex> lock(ledger_->mu);
    std::map<std::string, std::set<std::string>> out;
    for (const auto& [cluster, users] : ledger_->accounts) {
      auto it = users.find(user);
      if (it != users.end() && !it->second.empty()) out[cluster] = it->second;
    }
    return out;
  }
  // The audit event numbered `seq`.
  AuditEvent EventAt(int64_t seq) {
    auto events = store_->ListAudit(AuditFilter{.after_seq = seq - 1, .limit = 1});
    EXPECT_TRUE(events.ok() && events->size() == 1);
    return events.ok() && !events->empty() ? events->front() : AuditEvent{};
  }

  std::shared_ptr<FakePeopleAccounts::Ledger> ledger_ = std::make_shared<FakePeopleAccounts::Ledger>();
  providers::Registry kinds_;
  identity::Binding binding_;
  std::vector<std::string> forgotten_;
  std::unique_ptr<JobService> jobs_;
  std::unique_ptr<PeopleService> people_;
  std::unique_ptr<ScimService> scim_;
};

TEST_F(PeopleServiceTest, APersonWhoMayWorkGetsAnAccountInEachTeamTheySubmitTo) {
  auto report = people_->Sync("alice@example.com", "tok_admin");
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->may_work);
  EXPECT_TRUE(report->ok) << ToJson(*report).dump();
  auto accounts = AccountsOf("alice");
  ASSERT_EQ(accounts.size(), estate_->providers.size()) << "one cluster per simulated provider";
  for (const auto& [cluster, teams] : accounts) EXPECT_EQ(teams, std::set<std::string>{"nlp"}) << cluster;
  for (const SyncStep& step : report->steps) {
    ASSERT_EQ(step.action, "provider.account.create");
    EXPECT_EQ(EventAt(step.seq).action, "provider.account.create");
  }
  EXPECT_EQ(EventAt(report->seq).action, "identity.sync");

  // Again: nothing left to do, nothing done twice.
  auto again = people_->Sync("alice@example.com", "tok_admin");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->steps.empty()) << ToJson(*again).dump();
}

TEST_F(PeopleServiceTest, ALeaverLosesTokensQueuedWorkAndAccountsEachStepWithItsOwnEvent) {
  ASSERT_TRUE(people_->Sync("alice@example.com", "tok_admin").ok());
  TokenService tokens(*store_, *queue_, clock_);
  auto token = tokens.Create(Admin(), "alice-cli", {"jobs:read", "jobs:write"}, Micros(0), "alice@example.com");
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  SubmitRequest submit;
  submit.spec_yaml = "name: queued\nresources: {accelerators: H100:1}\nlabels: {owner: alice@example.com, team: nlp}\n"
                     "run: train\n";
  auto job = Wait<SubmitResult>([&](auto done) { jobs_->Submit(Admin(), submit, done); });
  ASSERT_TRUE(job.ok()) << job.status().ToString();

  ASSERT_TRUE(scim_->Deactivate("alice@example.com", ScimCaller{"tok_idp", "", false}).ok());
  auto report = people_->Sync("alice@example.com", "tok_admin");
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(report->may_work);
  EXPECT_TRUE(report->ok) << ToJson(*report).dump();
  std::map<std::string, int> seen;
  for (const SyncStep& step : report->steps) {
    const std::string action = step.action;
    ++seen[action];
    ASSERT_GT(step.seq, 0) << action << " " << step.target;
    const AuditEvent e = EventAt(step.seq);
    EXPECT_EQ(e.action, action == "job.cancel" ? "job.cancel" : action) << step.target;
    EXPECT_EQ(e.actor, "tok_admin");
  }
  EXPECT_EQ(seen["token.revoke"], 1);
  EXPECT_EQ(seen["job.cancel"], 1);
  EXPECT_EQ(seen["provider.account.remove"], static_cast<int>(estate_->providers.size()));
  EXPECT_EQ(forgotten_, std::vector<std::string>{token->record.id}) << "this replica's token cache is told";
  EXPECT_TRUE(AccountsOf("alice").empty());
  auto detail = jobs_->Get(job->job.id);
  ASSERT_TRUE(detail.ok());
  EXPECT_EQ(detail->job.state, JobState::kCancelled);
  EXPECT_EQ(EventAt(report->seq).action, "identity.deprovision");

  // A workload token minted for one of her jobs outlives the job: until it
  // expires, whoever accepts it (an AWS role) lets it in, so she still
  // retains access though the job is over.
  AuditEvent minted;
  minted.time = clock_.Now();
  minted.actor = "tok_admin";
  minted.action = "workload.token.issue";
  minted.resource = "job/" + job->job.id;
  minted.details = {{"attempt", 1},
                    {"jti", "jti-1"},
                    {"audiences", std::vector<std::string>{"sts.amazonaws.com"}},
                    {"expires_at", FormatRfc3339(clock_.Now() + std::chrono::hours(1))}};
  ASSERT_TRUE(queue_->Run([minted](WriteTx& tx) mutable { return tx.AppendAudit(minted); }).ok());
  auto credentials = people_->Credentials("alice@example.com");
  ASSERT_TRUE(credentials.ok()) << credentials.status().ToString();
  ASSERT_EQ(credentials->workload_tokens.size(), 1u);
  EXPECT_EQ(credentials->workload_tokens[0].audiences, std::vector<std::string>{"sts.amazonaws.com"});
  EXPECT_TRUE(credentials->retains_access) << ToJson(*credentials).dump();
}

// Someone still active who loses their last role (removed from their only
// group) keeps no work: their queued and running jobs are handled as a
// leaver's, per identity.deprovision, and the sync event counts the steps.
TEST_F(PeopleServiceTest, LosingOnesLastRoleStopsOnesWork) {
  ASSERT_TRUE(people_->Sync("alice@example.com", "tok_admin").ok());
  SubmitRequest submit;
  submit.spec_yaml = "name: queued\nresources: {accelerators: H100:1}\nlabels: {owner: alice@example.com, team: nlp}\n"
                     "run: train\n";
  // Alice submits herself, signed in, as researcher of nlp.
  identity::Principal alice = identity::PersonPrincipal("user:alice@example.com", "alice@example.com", "", {"ml-nlp"},
                                                        {binding_});
  auto job = Wait<SubmitResult>([&](auto done) { jobs_->Submit(alice, submit, done); });
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  // The same team's work submitted by a service token in her name is the
  // token's creator's: it stays.
  submit.spec_yaml = "name: batch\nresources: {accelerators: H100:1}\nlabels: {owner: alice@example.com, team: nlp}\n"
                     "run: train\n";
  auto batch = Wait<SubmitResult>([&](auto done) { jobs_->Submit(Admin(), submit, done); });
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();

  // Still in the group: nothing happens to the job.
  auto kept = people_->Sync("alice@example.com", "tok_admin");
  ASSERT_TRUE(kept.ok());
  EXPECT_TRUE(kept->steps.empty()) << ToJson(*kept).dump();
  EXPECT_EQ(jobs_->Get(job->job.id)->job.state, JobState::kPending);

  // The binding now makes the group researcher of another team: alice may
  // still work, but no longer in nlp.
  binding_.team = "vision";
  auto report = people_->Sync("alice@example.com", "tok_admin");
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->may_work);
  std::map<std::string, int> seen;
  for (const SyncStep& step : report->steps) ++seen[step.action];
  EXPECT_EQ(seen["job.cancel"], 1) << ToJson(*report).dump();
  EXPECT_EQ(seen["token.revoke"], 0) << "an active person keeps their credentials";
  auto detail = jobs_->Get(job->job.id);
  ASSERT_TRUE(detail.ok());
  EXPECT_EQ(detail->job.state, JobState::kCancelled);
  EXPECT_EQ(jobs_->Get(batch->job.id)->job.state, JobState::kPending);
  const AuditEvent summary = EventAt(report->seq);
  EXPECT_EQ(summary.action, "identity.sync");
  EXPECT_EQ(summary.details.Int("steps"), static_cast<int64_t>(report->steps.size()));
  bool said = false;
  for (const SyncStep& step : report->steps) {
    if (step.action == "job.cancel") {
      said = EventAt(step.seq).details.String("reason").find("no longer holds a role") != std::string::npos;
    }
  }
  EXPECT_TRUE(said) << "the cancellation says why";
}

}  // namespace
}  // namespace causeway::testing
