// ReaperService stepped by the test: the embedded estate's simulated
// providers, the scheduler and the reaper on a clock the test moves a minute
// at a time. The estate's policy: a GPU below 10% for a whole 20-minute
// window (samples at most 10 minutes apart) warns; still idle 10 minutes
// later, the job is cancelled; jobs labelled keep-alive are exempt.
#include "service/reaper_service.h"

#include <memory>
#include <string>
#include <vector>

#include "api/services.h"
#include "service/job_service.h"
#include "service/scheduler_service.h"
#include "unit/service/service_fixture.h"

namespace causeway::testing {
namespace {

class ReaperServiceTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    scheduler_ = std::make_unique<SchedulerService>(*store_, *queue_, *estate_, clock_, 1);
    jobs_ = std::make_unique<JobService>(*store_, *queue_, *estate_, clock_, nullptr, api::HooksFor(scheduler_.get()));
    reaper_ = std::make_unique<ReaperService>(*scheduler_, *queue_, *estate_);
  }
  void TearDown() override {
    reaper_.reset();
    if (scheduler_) scheduler_->Stop();
    ServiceTest::TearDown();
  }

  // Submits a one-GPU job of team nlp whose simulated GPU runs at
  // `utilization` percent for four hours.
  std::string Submit(const std::string& name, int utilization, const std::string& extra_labels = "") {
    SubmitRequest r;
    r.spec_yaml = "name: " + name +
                  "\nresources: {accelerators: H100:1}\nlabels: {owner: alice@example.com, team: nlp" + extra_labels +
                  "}\nsim: {utilization: " + std::to_string(utilization) + ", duration: 4h}\nrun: train\n";
    auto made = Wait<SubmitResult>([&](auto done) { jobs_->Submit(Admin(), r, done); });
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    return made.ok() ? made->job.id : "";
  }

  // `minutes` of the clock, a scheduler cycle and a reaper cycle each.
  void Run(int minutes) {
    for (int i = 0; i < minutes; ++i) {
      clock_.Advance(std::chrono::minutes(1));
      ASSERT_TRUE(scheduler_->TickOnce().ok());
      ASSERT_TRUE(reaper_->TickOnce().ok());
    }
  }

  JobState StateOf(const std::string& id) {
    auto detail = jobs_->Get(id);
    EXPECT_TRUE(detail.ok()) << detail.status().ToString();
    return detail.ok() ? detail->job.state : JobState::kPending;
  }

  // The reaper's audit events of `action` about job `id`.
  std::vector<AuditEvent> ReaperEvents(const std::string& action, const std::string& id) {
    std::vector<AuditEvent> out;
    for (AuditEvent& e : Audit(action)) {
      if (e.resource == "job/" + id) out.push_back(std::move(e));
    }
    return out;
  }

  std::unique_ptr<SchedulerService> scheduler_;
  std::unique_ptr<JobService> jobs_;
  std::unique_ptr<ReaperService> reaper_;
};

TEST_F(ReaperServiceTest, AnIdleJobIsWarnedThenCancelledWhileBusyAndExemptJobsRunOn) {
  const std::string idle = Submit("idle", 0);
  const std::string busy = Submit("busy", 90);
  const std::string exempt = Submit("notebook", 0, ", keep-alive: \"true\"");
  Run(2);
  for (const std::string& id : {idle, busy, exempt}) ASSERT_EQ(StateOf(id), JobState::kRunning) << id;

  // Idle samples: first a warning; the cancel only once the grace period
  // has passed since it.
  int warned_at = -1, cancelled_at = -1;
  for (int minute = 1; minute <= 60 && cancelled_at < 0; ++minute) {
    Run(1);
    if (warned_at < 0 && !ReaperEvents("reaper.warn", idle).empty()) warned_at = minute;
    if (!ReaperEvents("reaper.cancel", idle).empty()) cancelled_at = minute;
    if (cancelled_at < 0) {
      EXPECT_EQ(StateOf(idle), JobState::kRunning) << "minute " << minute;
    }
  }
  ASSERT_GT(warned_at, 0) << "never warned";
  ASSERT_GT(cancelled_at, 0) << "never cancelled";
  EXPECT_GE(cancelled_at - warned_at, 10) << "the estate's grace period is 10 minutes";
  EXPECT_EQ(ReaperEvents("reaper.warn", idle).size(), 1u) << "warned once";

  // Cancelled by the reaper, with what the idle time cost for `causeway waste`.
  std::vector<AuditEvent> cancels = ReaperEvents("reaper.cancel", idle);
  ASSERT_EQ(cancels.size(), 1u);
  const Details& d = cancels[0].details;
  EXPECT_EQ(d.String("policy"), "idle-gpus");
  EXPECT_EQ(d.String("team"), "nlp");
  EXPECT_EQ(d.Int("gpus"), 1);
  EXPECT_GE(d.Int("idle_seconds"), 10 * 60);
  EXPECT_GT(d.Int("price_micros"), 0);
  EXPECT_FALSE(d.Bool("dry_run"));
  EXPECT_EQ(StateOf(idle), JobState::kCancelled);
  std::vector<AuditEvent> cancelled = ReaperEvents("job.cancel", idle);
  ASSERT_EQ(cancelled.size(), 1u);
  EXPECT_EQ(cancelled[0].actor, "reaper");
  EXPECT_EQ(cancelled[0].details.String("policy"), "idle-gpus");

  // The others run on, untouched; the busy one's samples count as work.
  for (const std::string& id : {busy, exempt}) {
    EXPECT_EQ(StateOf(id), JobState::kRunning) << id;
    EXPECT_TRUE(ReaperEvents("reaper.warn", id).empty()) << id;
    EXPECT_TRUE(ReaperEvents("reaper.cancel", id).empty()) << id;
  }
  telemetry::Utilization u = reaper_->AttemptUtilization(busy, 1);
  EXPECT_GT(u.observed_gpu_seconds(), 0);
  EXPECT_GT(u.work_gpu_seconds(), u.observed_gpu_seconds() / 2) << "about 90% busy";
}

TEST_F(ReaperServiceTest, PushedSamplesAreKeptOnlyForRunningAttemptsWithinTheirBounds) {
  const std::string busy = Submit("busy", 90);
  Run(2);
  ASSERT_EQ(StateOf(busy), JobState::kRunning);
  const Timestamp now = clock_.Now();
  auto sample = [&](const std::string& job, int gpu, Timestamp at) {
    GpuSample s;
    s.job_id = job;
    s.gpu = gpu;
    s.time = at;
    s.utilization_percent = 50;
    return s;
  };
  auto pushed = reaper_->Push(*store_,
                              {sample(busy, 0, now),                          // kept: its running attempt
                               sample("job_nobody", 0, now),                  // no such job
                               sample(busy, 3, now),                          // it has one GPU
                               sample(busy, 0, now - std::chrono::hours(2)),  // older than an hour
                               sample(busy, 0, now + std::chrono::hours(1))},  // from the future
                              now);
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  EXPECT_EQ(pushed->accepted, 1u);
  EXPECT_EQ(pushed->unknown_attempt, 1u);
  EXPECT_EQ(pushed->gpu_out_of_range, 1u);
  EXPECT_EQ(pushed->outside_window, 2u);

  // A push naming more jobs than allowed is refused whole.
  std::vector<GpuSample> many;
  for (int i = 0; i < 300; ++i) many.push_back(sample("job_" + std::to_string(i), 0, now));
  EXPECT_EQ(reaper_->Push(*store_, many, now).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace causeway::testing
