// GPU telemetry parsers and the idle reaper, in virtual time: every edge of
// the idle rule (partly covered windows, gaps, one GPU of many, exemptions,
// warn then cancel after the grace, recovery, dry run).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "telemetry/reaper.h"
#include "telemetry/samples.h"

namespace causeway::telemetry {
namespace {

constexpr int64_t kMinute = 60LL * 1000000;
const Timestamp kT0 = FromUnixMicros(1796076000LL * 1000000);

Timestamp At(int minutes) { return kT0 + Micros(minutes * kMinute); }

// One sample a minute for GPU `gpu` of (job, 1) over [from, to) minutes.
std::vector<GpuSample> Minutes(const std::string& job, int gpu, int from, int to, int percent) {
  std::vector<GpuSample> out;
  for (int m = from; m < to; ++m) {
    GpuSample s;
    s.job_id = job;
    s.attempt = 1;
    s.gpu = gpu;
    s.time = At(m);
    s.utilization_percent = percent;
    out.push_back(s);
  }
  return out;
}

ActiveAttempt Running(const std::string& job, const std::string& team = "research",
                       std::map<std::string, std::string> labels = {}) {
  return ActiveAttempt{job, 1, team, team + "-owner", std::move(labels), 1};
}

ReaperPolicy Policy() {
  ReaperPolicy p;
  p.name = "idle-20";
  p.threshold_percent = 20;
  p.window = Micros(30 * kMinute);
  p.grace = Micros(15 * kMinute);
  p.max_gap = Micros(2 * kMinute);
  return p;
}

TEST(TelemetryParseTest, ExpositionMatchesJobsByLabel) {
  auto samples = ParseExposition(
      "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n"
      "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\",causeway_job=\"job_a\",causeway_attempt=\"2\"} 37 1796076000000\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",causeway_job=\"job_a\",causeway_attempt=\"2\"} 0.4\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"2\",causeway_job=\"job_a\"} 0.815 1796076000000\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"3\"} 99\n"  // no job: a GPU nobody in Causeway holds
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",causeway_job=\"job_a\"} 1024\n",
      SeriesFormat{}, kT0 + Micros(5));
  ASSERT_TRUE(samples.ok()) << samples.status().ToString();
  ASSERT_EQ(samples->size(), 3u);
  EXPECT_EQ((*samples)[0].attempt, 2);
  EXPECT_EQ((*samples)[0].utilization_percent, 37);
  EXPECT_EQ((*samples)[0].time, kT0);
  EXPECT_EQ((*samples)[1].time, kT0 + Micros(5)) << "no timestamp: now";
  EXPECT_EQ((*samples)[2].utilization_percent, 82) << "a ratio, as percent";
  auto bad = ParseExposition("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",causeway_job=\"x\"} lots\n", SeriesFormat{}, kT0);
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("exposition:1:"), std::string::npos) << bad.status().message();
}

TEST(TelemetryParseTest, NvidiaSmiCsvWithAndWithoutHeader) {
  auto samples = ParseNvidiaSmiCsv(
      "timestamp, index, uuid, utilization.gpu [%]\n"
      "2026/11/30 12:00:00.500, 0, GPU-aaa, 35 %\n"
      "2026/11/30 12:00:00.500, 1, GPU-bbb, 0 %\n",
      "job_x", 3);
  ASSERT_TRUE(samples.ok()) << samples.status().ToString();
  ASSERT_EQ(samples->size(), 2u);
  EXPECT_EQ((*samples)[0].utilization_percent, 35);
  EXPECT_EQ((*samples)[1].gpu, 1);
  EXPECT_EQ((*samples)[0].attempt, 3);
  EXPECT_EQ(FormatRfc3339((*samples)[0].time).substr(0, 19), "2026-11-30T12:00:00");
  auto plain = ParseNvidiaSmiCsv("2026/11/30 12:00:01.000, 0, 7\n", "job_x", 1);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)[0].utilization_percent, 7);
  auto bad = ParseNvidiaSmiCsv("2026/11/30 12:00:01.000, 0, [N/A]\n", "job_x", 1);
  EXPECT_NE(bad.status().message().find("nvidia-smi:1:"), std::string::npos);
}

TEST(TelemetryParseTest, PrometheusMatrix) {
  auto answer = nlohmann::json::parse(R"({"status": "success", "data": {"resultType": "matrix", "result": [
      {"metric": {"__name__": "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gpu": "1", "causeway_job": "job_a",
                  "causeway_attempt": "1"},
       "values": [[1796076000, "0.5"], [1796076060.5, "NaN"], [1796076120, "0.05"]]}]}})");
  auto samples = ParsePrometheusMatrix(answer, SeriesFormat{});
  ASSERT_TRUE(samples.ok());
  ASSERT_EQ(samples->size(), 2u) << "NaN is no sample";
  EXPECT_EQ((*samples)[0].utilization_percent, 50);
  EXPECT_EQ((*samples)[1].utilization_percent, 5);
  EXPECT_EQ((*samples)[1].gpu, 1);
  auto refused = ParsePrometheusMatrix(nlohmann::json::parse(R"({"status": "error", "error": "bad query"})"),
                                       SeriesFormat{});
  EXPECT_EQ(refused.status().code(), Code::kUnavailable);
}

TEST(ReaperTest, IdleForTheWholeWindowWarnsThenCancelsAfterTheGrace) {
  SampleStore store(Micros(120 * kMinute));
  store.Add(Minutes("job_idle", 0, 0, 120, 3));
  store.Add(Minutes("job_busy", 0, 0, 120, 85));
  Reaper reaper({Policy()});
  std::vector<ActiveAttempt> running = {Running("job_idle"), Running("job_busy")};

  auto at27 = reaper.Evaluate(At(27), running, store);
  EXPECT_TRUE(at27.empty()) << "the window reaches back 3 minutes before the first sample: not covered yet";
  auto at31 = reaper.Evaluate(At(31), running, store);
  ASSERT_EQ(at31.size(), 1u);
  EXPECT_EQ(at31[0].kind, ReaperAction::kWarn);
  EXPECT_EQ(at31[0].job_id, "job_idle");
  EXPECT_EQ(at31[0].max_percent, 3);
  EXPECT_NE(at31[0].reason.find("below 20%"), std::string::npos) << at31[0].reason;
  EXPECT_TRUE(reaper.Evaluate(At(45), running, store).empty()) << "within the grace";
  auto at46 = reaper.Evaluate(At(46), running, store);
  ASSERT_EQ(at46.size(), 1u);
  EXPECT_EQ(at46[0].kind, ReaperAction::kCancel);
  // The scheduler stops a cancelled attempt a moment later; until then it
  // is still seen running and idle, and gets no second warning or cancel.
  EXPECT_TRUE(reaper.Evaluate(At(47), running, store).empty());
  EXPECT_TRUE(reaper.Evaluate(At(80), running, store).empty());
  // A cancel whose write failed is given again at the next look.
  reaper.CancelNotDone("job_idle", 1);
  auto retried = reaper.Evaluate(At(81), running, store);
  ASSERT_EQ(retried.size(), 1u);
  EXPECT_EQ(retried[0].kind, ReaperAction::kCancel);
  // Once it is gone, it is forgotten: an attempt of that number seen again
  // starts from nothing.
  EXPECT_TRUE(reaper.Evaluate(At(82), {Running("job_busy")}, store).empty());
  auto again = reaper.Evaluate(At(83), running, store);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].kind, ReaperAction::kWarn);
}

// A young attempt is never idle: samples stamped before it started (a
// scraper's, a clock ahead) do not give it a whole window.
TEST(ReaperTest, AnAttemptYoungerThanTheWindowIsNeverIdle) {
  SampleStore store(Micros(120 * kMinute));
  store.Add(Minutes("job_young", 0, 0, 120, 0));
  Reaper reaper({Policy()});
  ActiveAttempt a = Running("job_young");
  a.started = At(20);
  EXPECT_TRUE(reaper.Evaluate(At(31), {a}, store).empty()) << "11 minutes old, window 30";
  EXPECT_TRUE(reaper.Evaluate(At(49), {a}, store).empty());
  auto at50 = reaper.Evaluate(At(50), {a}, store);
  ASSERT_EQ(at50.size(), 1u);
  EXPECT_EQ(at50[0].kind, ReaperAction::kWarn);
  EXPECT_LE(at50[0].idle_for, At(50) - *a.started) << "never idle for longer than it has run";
}

TEST(ReaperTest, PartlyCoveredWindowsAndGapsNeverTrigger) {
  SampleStore store(Micros(120 * kMinute));
  store.Add(Minutes("job_late", 0, 20, 60, 0));     // samples only from minute 20
  store.Add(Minutes("job_gap", 0, 0, 20, 0));       // a 5-minute hole
  store.Add(Minutes("job_gap", 0, 25, 60, 0));
  store.Add(Minutes("job_stale", 0, 0, 40, 0));     // the scraper stopped at 40
  Reaper reaper({Policy()});
  auto actions = reaper.Evaluate(At(44), {Running("job_late"), Running("job_gap"), Running("job_stale")}, store);
  for (const auto& a : actions) ADD_FAILURE() << a.job_id << " was judged idle: " << a.reason;
  // Once the late job's window is covered, it is idle.
  auto later = reaper.Evaluate(At(52), {Running("job_late")}, store);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].job_id, "job_late");
}

TEST(ReaperTest, OneIdleGpuOfManyIsEnoughAndOneBusySampleIsNot) {
  SampleStore store(Micros(120 * kMinute));
  store.Add(Minutes("job_half", 0, 0, 60, 90));
  store.Add(Minutes("job_half", 1, 0, 60, 1));  // GPU 1 does nothing
  store.Add(Minutes("job_blip", 0, 0, 60, 0));
  store.Add(std::vector<GpuSample>{GpuSample{"job_blip", 1, "", 0, At(50), 25}});  // one sample at 25%
  Reaper reaper({Policy()});
  auto actions = reaper.Evaluate(At(59), {Running("job_half"), Running("job_blip")}, store);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].job_id, "job_half");
  EXPECT_EQ(actions[0].gpu, 1);
}

TEST(ReaperTest, ExemptionsTeamsWarnOnlyDryRunAndRecovery) {
  SampleStore store(Micros(120 * kMinute));
  for (const char* job : {"job_exempt", "job_nlp", "job_dry", "job_back"}) store.Add(Minutes(job, 0, 0, 40, 0));
  store.Add(Minutes("job_back", 0, 40, 60, 95));  // gets busy at 40
  ReaperPolicy research = Policy();
  research.team = "research";
  research.exempt_labels = {"interactive=true"};
  ReaperPolicy nlp = Policy();
  nlp.name = "nlp-warn";
  nlp.team = "nlp";
  nlp.cancel = false;
  ReaperPolicy everyone = Policy();
  everyone.name = "dry";
  everyone.dry_run = true;
  Reaper reaper({research, nlp, everyone});
  std::vector<ActiveAttempt> running = {Running("job_exempt", "research", {{"interactive", "true"}}),
                                         Running("job_nlp", "nlp"), Running("job_dry", "vision"),
                                         Running("job_back", "research")};
  auto first = reaper.Evaluate(At(35), running, store);
  std::map<std::string, ReaperAction> by;
  for (const auto& a : first) by[a.job_id] = a;
  EXPECT_EQ(by.count("job_exempt"), 0u);
  EXPECT_EQ(by["job_nlp"].policy, "nlp-warn");
  EXPECT_TRUE(by["job_dry"].dry_run);
  EXPECT_EQ(by["job_back"].kind, ReaperAction::kWarn);
  // job_back works again; the warn-only policy never cancels.
  store.Add(Minutes("job_nlp", 0, 40, 80, 0));
  store.Add(Minutes("job_dry", 0, 40, 80, 0));
  auto later = reaper.Evaluate(At(75), running, store);
  by.clear();
  for (const auto& a : later) by[a.job_id] = a;
  EXPECT_EQ(by["job_back"].kind, ReaperAction::kRecovered);
  EXPECT_EQ(by.count("job_nlp"), 0u) << "warn-only";
  EXPECT_EQ(by["job_dry"].kind, ReaperAction::kCancel);
  EXPECT_TRUE(by["job_dry"].dry_run);
}

TEST(SampleStoreTest, OutOfOrderDuplicatesAndPruning) {
  SampleStore store(Micros(60 * kMinute));
  store.Add(Minutes("job_a", 0, 10, 20, 50));
  store.Add(Minutes("job_a", 0, 0, 12, 10));  // overlaps: the same moments again
  auto series = store.Attempt("job_a", 1);
  ASSERT_EQ(series.size(), 1u);
  ASSERT_EQ(series[0]->size(), 20u);
  EXPECT_EQ((*series[0])[11].percent, 10) << "the later report of a moment wins";
  store.Prune(At(75));
  EXPECT_EQ(store.Attempt("job_a", 1)[0]->size(), 5u);
  store.Prune(At(200));
  EXPECT_EQ(store.series(), 0u);
}

// Goodput: utilization integrated over time, the same whether the samples
// are still kept or were pruned (folded) meanwhile; a gap longer than
// max_gap is not observed; samples older than what was folded are ignored.
TEST(SampleStoreTest, AttemptUtilizationSurvivesPruning) {
  auto feed = [](SampleStore& store) {
    store.Add(Minutes("job_a", 0, 0, 31, 50));    // 30 observed minutes at 50%
    store.Add(Minutes("job_a", 1, 0, 11, 100));   // 10 minutes at 100%...
    store.Add(Minutes("job_a", 1, 41, 46, 100));  // ...a 30-minute gap (not observed), then 4 more
    store.Add(Minutes("job_b", 0, 0, 11, 100));   // another job
  };
  SampleStore kept(Micros(1000 * kMinute), Micros(10 * kMinute));
  feed(kept);
  Utilization u = kept.AttemptUtilization("job_a", 1);
  EXPECT_EQ(u.observed_gpu_seconds(), (30 + 10 + 4) * 60);
  EXPECT_EQ(u.work_gpu_seconds(), (15 + 10 + 4) * 60);

  SampleStore pruned(Micros(5 * kMinute), Micros(10 * kMinute));
  pruned.Add(Minutes("job_a", 0, 0, 31, 50));
  pruned.Prune(At(20));  // folds minutes 0-14 of GPU 0
  pruned.Add(Minutes("job_a", 0, 3, 5, 0));  // older than what was folded: ignored
  pruned.Add(Minutes("job_a", 1, 0, 11, 100));
  pruned.Add(Minutes("job_a", 1, 41, 46, 100));
  pruned.Add(Minutes("job_b", 0, 0, 11, 100));
  pruned.Prune(At(43));
  Utilization after = pruned.AttemptUtilization("job_a", 1);
  EXPECT_EQ(after.observed_gpu_us, u.observed_gpu_us);
  EXPECT_EQ(after.work_percent_us, u.work_percent_us);
  pruned.Prune(At(100));
  EXPECT_EQ(pruned.series(), 0u);
  EXPECT_EQ(pruned.AttemptUtilization("job_a", 1).work_percent_us, u.work_percent_us) << "kept after the samples";
  pruned.Prune(At(100 + 24 * 60 + 1));
  EXPECT_EQ(pruned.AttemptUtilization("job_a", 1).observed_gpu_us, 0) << "forgotten a day after the last sample";
}

}  // namespace
}  // namespace causeway::telemetry
