// JobService against a real store: what a submission, a replay, a
// cancellation and a checkpoint write, when the scheduler's hooks hear of
// them, and who may see or cancel a job.
#include "service/job_service.h"

#include "policy/policy.h"
#include "unit/service/service_fixture.h"

namespace causeway::testing {
namespace {

std::string Spec(const std::string& name = "eval-sweep") { return ExampleSpec(name); }

class JobServiceTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    JobHooks hooks;
    hooks.submitted = [this](const JobRecord& job, const JobSpec&) { submitted_.push_back(job.id); };
    hooks.cancelled = [this](const std::string& id) { cancelled_.push_back(id); };
    hooks.checkpointed = [this](const std::string& id, const std::string& path) { checkpoints_.push_back(id + path); };
    jobs_ = std::make_unique<JobService>(*store_, *queue_, *estate_, clock_, nullptr, hooks);
  }
  Result<SubmitResult> Submit(const std::string& yaml, const std::string& key = "",
                              const identity::Principal& who = Admin()) {
    SubmitRequest r;
    r.spec_yaml = yaml;
    r.idempotency_key = key;
    return Wait<SubmitResult>([&](auto done) { jobs_->Submit(who, r, done); });
  }
  std::unique_ptr<JobService> jobs_;
  // Written by the commit thread; read after Wait has seen the commit.
  std::vector<std::string> submitted_, cancelled_, checkpoints_;
};

TEST_F(JobServiceTest, ASubmissionIsDurableBeforeTheSchedulerHearsOfIt) {
  auto r = Submit(Spec());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->created);
  EXPECT_EQ(r->job.state, JobState::kPending);
  EXPECT_EQ(r->job.team, "research");
  EXPECT_EQ(submitted_, std::vector<std::string>{r->job.id});
  auto detail = jobs_->Get(r->job.id);
  ASSERT_TRUE(detail.ok()) << detail.status().ToString();
  EXPECT_EQ(detail->job.name, "eval-sweep");
  auto events = Audit("job.submit");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].resource, "job/" + r->job.id);
}

TEST_F(JobServiceTest, AnIdempotencyKeyReplaysTheJobAndRefusesAnotherSpec) {
  auto first = Submit(Spec(), "key-1");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto again = Submit(Spec(), "key-1");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->job.id, first->job.id);
  EXPECT_EQ(submitted_.size(), 1u) << "a replay schedules nothing new";
  auto other = Submit(Spec("nlp-eval"), "key-1");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), Code::kConflict);
}

// Secrets are sealed for the job before anything is written: the stored job
// holds neither the value given at submission nor one the file gave, the
// trail names them, and a retry with other values is another request.
TEST_F(JobServiceTest, SecretsAreStoredSealedAndNamedOnlyInTheTrail) {
  std::string yaml = Spec();
  yaml += "\nsecrets:\n  IN_FILE: in-the-file-value\n  GIVEN: null\n";
  SubmitRequest r;
  r.spec_yaml = yaml;
  r.idempotency_key = "secret-key";
  r.inputs.secrets = {{"GIVEN", "given-value"}};
  auto refused = Wait<SubmitResult>([&](auto done) { jobs_->Submit(Admin(), r, done); });
  ASSERT_FALSE(refused.ok()) << "no secrets key: no secrets";
  EXPECT_EQ(refused.status().code(), Code::kFailedPrecondition);

  auto box = identity::SecretBox::FromKey(std::string(32, 's'));
  jobs_->SetSecretBox(&*box);
  auto made = Wait<SubmitResult>([&](auto done) { jobs_->Submit(Admin(), r, done); });
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  auto stored = store_->GetJob(made->job.id);
  ASSERT_TRUE(stored.ok() && *stored);
  const JobRecord& job = **stored;
  for (const std::string& field : {job.spec_yaml, job.spec_json, job.sealed_secrets}) {
    EXPECT_EQ(field.find("in-the-file-value"), std::string::npos) << field;
    EXPECT_EQ(field.find("given-value"), std::string::npos) << field;
  }
  auto opened = box->Open(job.sealed_secrets, job.id);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(nlohmann::json::parse(*opened),
            (nlohmann::json{{"GIVEN", "given-value"}, {"IN_FILE", "in-the-file-value"}}));
  EXPECT_TRUE(std::any_of(made->warnings.begin(), made->warnings.end(),
                          [](const Diagnostic& d) { return d.field == "secrets"; }));
  auto events = Audit("job.submit");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(*events[0].details.Find("secrets"), DetailValue(std::vector<std::string>{"GIVEN", "IN_FILE"}));

  auto replay = Wait<SubmitResult>([&](auto done) { jobs_->Submit(Admin(), r, done); });
  ASSERT_TRUE(replay.ok());
  EXPECT_FALSE(replay->created);
  r.inputs.secrets["GIVEN"] = "another-value";
  auto other = Wait<SubmitResult>([&](auto done) { jobs_->Submit(Admin(), r, done); });
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), Code::kConflict);

  // A variable the file leaves null and the submission does not give.
  r.idempotency_key.clear();
  r.inputs.secrets.clear();
  auto unset = Wait<SubmitResult>([&](auto done) { jobs_->Submit(Admin(), r, done); });
  ASSERT_FALSE(unset.ok());
  EXPECT_EQ(unset.status().diagnostics().at(0).field, "secrets.GIVEN");
}

TEST_F(JobServiceTest, AnInvalidSpecIsRefusedAtOnceAndWritesNothing) {
  auto r = Submit("name: x\nresources: {accelerators: H200:0}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_FALSE(r.status().diagnostics().empty()) << "the field and place are named";
  EXPECT_TRUE(Audit("job.").empty());
  EXPECT_TRUE(submitted_.empty());
}

// A pipeline is written whole: one job per step, in order, each naming the
// step it runs after, the scheduler told of them in that order.
TEST_F(JobServiceTest, APipelineIsOneJobPerStepEachAfterTheOneBefore) {
  std::string yaml = "name: nightly\n---\n" + Spec() + "\n---\n" + Spec("nlp-eval") + "\n";
  auto r = Submit(yaml, "pipeline-key");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->steps.size(), 2u);
  const JobRecord& a = r->steps[0];
  const JobRecord& b = r->steps[1];
  EXPECT_EQ(r->job.id, a.id);
  EXPECT_EQ(a.pipeline.rfind("pl_", 0), 0u) << a.pipeline;
  EXPECT_EQ(b.pipeline, a.pipeline);
  EXPECT_EQ(a.pipeline_name, "nightly");
  EXPECT_EQ(a.step, 0);
  EXPECT_EQ(b.step, 1);
  EXPECT_EQ(a.steps, 2);
  EXPECT_EQ(a.after, "");
  EXPECT_EQ(b.after, a.id);
  EXPECT_EQ(b.name, "nlp-eval");
  EXPECT_EQ(submitted_, (std::vector<std::string>{a.id, b.id}));
  // Each step keeps its own document.
  auto stored = jobs_->Get(b.id);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->job.spec_yaml.find("---"), std::string::npos);
  EXPECT_EQ(stored->job.after, a.id);
  JobFilter f;
  f.pipeline = a.pipeline;
  auto listed = jobs_->List(f);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 2u);
  auto events = Audit("job.submit");
  ASSERT_EQ(events.size(), 2u);
  const Details* pipeline = events[1].details.Object("pipeline");
  ASSERT_NE(pipeline, nullptr);
  EXPECT_EQ(pipeline->String("after"), a.id);
  EXPECT_EQ(pipeline->Int("step"), 2);

  // A replay answers with the first step and makes nothing new.
  auto again = Submit(yaml, "pipeline-key");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->job.id, a.id);
  EXPECT_EQ(submitted_.size(), 2u);
}

// A job group is written whole too: one job per task, none after another,
// each with its role, as the scheduler and a later reader need them.
TEST_F(JobServiceTest, AJobGroupIsOneJobPerTaskWithItsRole) {
  std::string yaml = "name: g\nexecution: parallel\nprimary_tasks: [eval-sweep]\ntermination_delay: 90\n---\n" +
                     Spec() + "\n---\n" + Spec("nlp-eval") + "\n";
  auto r = Submit(yaml);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->steps.size(), 2u);
  for (const JobRecord& t : r->steps) {
    auto stored = jobs_->Get(t.id);
    ASSERT_TRUE(stored.ok());
    const JobRecord& j = stored->job;
    EXPECT_EQ(j.pipeline.rfind("jg_", 0), 0u) << j.pipeline;
    EXPECT_EQ(j.pipeline_name, "g");
    EXPECT_TRUE(j.job_group);
    EXPECT_EQ(j.after, "") << "a group's tasks start together";
    EXPECT_EQ(j.auxiliary, j.name == "nlp-eval");
    EXPECT_EQ(j.termination_delay_seconds, j.name == "nlp-eval" ? 90 : 0);
  }
  auto events = Audit("job.submit");
  ASSERT_EQ(events.size(), 2u);
  const Details* group = events[1].details.Object("job_group");
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->String("name"), "g");
  EXPECT_EQ(group->Int("task"), 2);
  EXPECT_EQ(group->Int("termination_delay_seconds"), 90);
  EXPECT_EQ(events[1].details.Object("pipeline"), nullptr);
}

TEST_F(JobServiceTest, APipelineWithOneBadStepIsRefusedWholeWithEveryProblem) {
  std::string yaml = Spec() + "\n---\nresources: {accelerators: H100:8, labels: {team: nobody}}\n---\n"
                              "resources: {accelerators: H100:8, labels: {team: nobody-else}}\n";
  auto r = Submit(yaml);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << r.status().ToString();
  std::string all;
  for (const auto& d : r.status().diagnostics()) all += d.ToString() + "\n";
  EXPECT_NE(all.find("step 2: unknown team \"nobody\""), std::string::npos) << all;
  EXPECT_NE(all.find("step 3: unknown team \"nobody-else\""), std::string::npos) << all;
  EXPECT_EQ(r.status().message().rfind("2 problems in the pipeline's steps; first: ", 0), 0u) << r.status().message();
  EXPECT_NE(r.status().message().find("step 2"), std::string::npos) << r.status().message();
  EXPECT_TRUE(Audit("job.").empty());
  EXPECT_TRUE(submitted_.empty());
  auto listed = jobs_->List(JobFilter{});
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
}

// The estate's policies refuse two steps of a job group, one of them with
// a refusal that has no diagnostics of its own: each is listed, naming its
// task, and the message counts exactly those listed.
TEST_F(JobServiceTest, APolicyProblemInAJobGroupNamesItsTaskAndTheCountMatches) {
  auto policies = policy::Chain::FromEstate(*estate_);
  jobs_ = std::make_unique<JobService>(*store_, *queue_, *estate_, clock_, policies.get());
  std::string yaml =
      "name: g\nexecution: parallel\n---\n"
      "name: fine\nresources: {accelerators: L4:1, labels: {team: research, owner: ada}}\nrun: x\n---\n"
      "name: no-owner\nresources: {accelerators: L4:1, labels: {team: research}}\nrun: x\n---\n"
      "name: wrong-gpu\nresources: {accelerators: H100:8, labels: {team: research, owner: ada}}\nrun: x\n";
  auto r = Submit(yaml);
  ASSERT_FALSE(r.ok());
  std::vector<Diagnostic> errors;
  for (const Diagnostic& d : r.status().diagnostics()) {
    if (!d.warning) errors.push_back(d);
  }
  std::string all;
  for (const Diagnostic& d : errors) all += d.ToString() + "\n";
  ASSERT_GE(errors.size(), 2u) << all;
  EXPECT_NE(all.find("task 2 (no-owner)"), std::string::npos) << all;
  EXPECT_NE(all.find("task 3 (wrong-gpu)"), std::string::npos) << all;
  for (const Diagnostic& d : errors) {
    EXPECT_TRUE(d.line > 0 || d.message.rfind("task ", 0) == 0) << "every problem names its task: " << d.ToString();
  }
  EXPECT_EQ(r.status().message().rfind(std::to_string(errors.size()) + " problems in the job group's tasks; first: ", 0), 0u)
      << r.status().message() << "\n" << all;
  EXPECT_TRUE(Audit("job.").empty());
}

TEST_F(JobServiceTest, CancelAndCheckpointReachTheSchedulerOnlyForJobsNotFinished) {
  auto r = Submit(Spec());
  ASSERT_TRUE(r.ok());
  auto checkpoint = Wait<Checkpoint>(
      [&](auto done) { jobs_->RegisterCheckpoint(Admin(), r->job.id, "s3://ckpt/step-10", 10, done); });
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  EXPECT_EQ(checkpoints_, std::vector<std::string>{r->job.id + "s3://ckpt/step-10"});
  auto listed = jobs_->Checkpoints(r->job.id);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].step, 10);

  auto cancelled = Wait<Cancellation>([&](auto done) { jobs_->Cancel(Admin(), r->job.id, "not needed", done); });
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  EXPECT_EQ(cancelled->job.state, JobState::kCancelled);
  auto events = Audit("job.cancel");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(cancelled->audit_seq, events[0].seq) << "the commit says where its event landed";
  EXPECT_EQ(cancelled_, std::vector<std::string>{r->job.id});

  auto twice = Wait<Cancellation>([&](auto done) { jobs_->Cancel(Admin(), r->job.id, "", done); });
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().code(), Code::kFailedPrecondition);
  auto late = Wait<Checkpoint>([&](auto done) { jobs_->RegisterCheckpoint(Admin(), r->job.id, "s3://x", 11, done); });
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(cancelled_.size(), 1u);
  EXPECT_EQ(checkpoints_.size(), 1u);
}

// A job bound to a residency zone registers checkpoints only in storage
// that the zone's clusters alone declare; storage of another zone, storage
// clusters of several zones share, and storage no cluster declares are
// refused with the reason. A job bound to no zone may checkpoint anywhere.
TEST_F(JobServiceTest, AZoneBoundJobsCheckpointOutsideItsZoneIsRefused) {
  for (Cluster& c : estate_->clusters) {
    c.storage = std::vector<std::string>{c.zone == "eu" ? "s3://ckpt-eu/" : "s3://ckpt-us/", "s3://shared/"};
  }
  auto bound = Submit("name: bound\nresources: {accelerators: H100:1}\nlabels: {team: vision, owner: a@corp.example}\n"
                      "residency: eu\nrun: echo\n");
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  auto register_at = [&](const std::string& id, const std::string& path) {
    return Wait<Checkpoint>([&](auto done) { jobs_->RegisterCheckpoint(Admin(), id, path, 1, done); });
  };
  EXPECT_TRUE(register_at(bound->job.id, "s3://ckpt-eu/run/step-1").ok());
  for (const char* outside : {"s3://ckpt-us/run/step-2", "s3://shared/run/step-3", "s3://nowhere/step-4"}) {
    auto refused = register_at(bound->job.id, outside);
    ASSERT_FALSE(refused.ok()) << outside;
    EXPECT_EQ(refused.status().code(), Code::kFailedPrecondition);
    EXPECT_NE(refused.status().message().find("bound to residency zone eu"), std::string::npos)
        << refused.status().message();
  }
  auto listed = jobs_->Checkpoints(bound->job.id);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 1u) << "nothing refused was stored";
  EXPECT_EQ(Audit("checkpoint.register").size(), 1u);

  auto free = Submit("name: free\nresources: {accelerators: H100:1}\nlabels: {team: vision, owner: a@corp.example}\n"
                     "run: echo\n");
  ASSERT_TRUE(free.ok()) << free.status().ToString();
  EXPECT_TRUE(register_at(free->job.id, "s3://nowhere/step-1").ok());
}

// Another team's job is not even confirmed to exist; one's own may be
// cancelled with jobs:write, another's in the team only with jobs:manage.
TEST_F(JobServiceTest, WhoMaySeeAndCancelAJob) {
  JobRecord job;
  job.id = "job_1";
  job.team = "nlp";
  job.owner = "alice@example.com";
  auto person = [](const std::string& user, const std::string& role_scope, const std::string& team) {
    identity::Principal p;
    p.token_id = "tok_" + user;
    p.user = user;
    identity::Grant g;
    g.role = "researcher";
    g.team = team;
    g.scopes = {"jobs:read", role_scope};
    p.grants = {g};
    p.scopes = g.scopes;
    return p;
  };
  EXPECT_TRUE(MayRead(Admin(), job).ok());
  EXPECT_EQ(MayRead(person("bob@example.com", "jobs:write", "vision"), job).code(), Code::kNotFound);
  EXPECT_TRUE(MayRead(person("bob@example.com", "jobs:write", "nlp"), job).ok());
  EXPECT_TRUE(MayCancel(person("alice@example.com", "jobs:write", "nlp"), job).ok());
  EXPECT_EQ(MayCancel(person("bob@example.com", "jobs:write", "nlp"), job).code(), Code::kPermissionDenied);
  EXPECT_TRUE(MayCancel(person("bob@example.com", "jobs:manage", "nlp"), job).ok());
  // The refusal names the person, not their token.
  Status denied = MayCancel(person("bob@example.com", "jobs:write", "nlp"), job);
  EXPECT_EQ(denied.message().rfind("bob@example.com may cancel only their own jobs", 0), 0u) << denied.message();
  EXPECT_EQ(MayCancel(person("bob@example.com", "jobs:write", "vision"), job).code(), Code::kNotFound);

  // A token with jobs:write alone cancels what it submitted, though it
  // cannot read it; another token's job stays hidden from it.
  identity::Principal submitter;
  submitter.token_id = "tok_ci";
  submitter.name = "ci";
  submitter.scopes = {"jobs:write"};
  job.submitted_by = "tok_ci";
  EXPECT_TRUE(MayCancel(submitter, job).ok());
  job.submitted_by = "tok_other";
  EXPECT_EQ(MayCancel(submitter, job).code(), Code::kPermissionDenied);
  submitter.scopes = {};
  EXPECT_EQ(MayCancel(submitter, job).code(), Code::kNotFound);
}

}  // namespace
}  // namespace causeway::testing
