// Planning: traces read in every format (and refused with file, line and
// field), replays with figures worked out by hand, determinism per seed,
// capacity never lengthening the median wait, a reservation nobody can use
// reported wholly unused, estate changes, and the report's forms.
#include <gtest/gtest.h>

#include "causeway/text.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "causeway/estate.h"
#include "planning/changes.h"
#include "planning/demand.h"
#include "planning/plan.h"
#include "planning/replay.h"
#include "planning/report.h"
#include "planning/trace.h"
#include "providers/registry.h"

namespace causeway::planning {
namespace {

namespace fs = std::filesystem;

class PlanningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("cw-plan-" + std::to_string(::getpid()) + "-" + std::to_string(++count_));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  Trace Read(const std::string& name, const std::string& text, TraceFormat format = TraceFormat::kCauseway) {
    auto t = ReadTrace(Write(name, text), format);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? std::move(*t) : Trace{};
  }
  // The figures of `trace` replayed on `yaml` with default options.
  std::map<std::string, double> Figured(const std::string& yaml, const Trace& trace) {
    auto run = Replay(Parse(yaml), trace, {});
    EXPECT_TRUE(run.ok()) << run.status().ToString();
    return run.ok() ? Figures(*run) : std::map<std::string, double>{};
  }
  // The shared data folder ($CAUSEWAY_SHARED_DATA, else ../shared/data).
  static fs::path SharedData() {
    const char* env = std::getenv("CAUSEWAY_SHARED_DATA");
    return env ? fs::path(env) : fs::path(CAUSEWAY_SOURCE_DIR) / ".." / "shared" / "data";
  }
  static Estate Parse(const std::string& yaml) {
    auto e = providers::ParseEstate(yaml, "estate.yaml");
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? std::move(*e) : Estate{};
  }

  fs::path dir_;
  static inline int count_ = 0;
};

// Two nodes of 4 H100 at 1.00 an hour, and (optionally) a pool of A100s.
std::string SmallEstate(int nodes = 2, const std::string& extra_pool = "", const std::string& reservations = "",
                        const std::string& sim = "") {
  return "providers: [{name: p, kind: sim, regions: [{name: r, zone: eu}]" + (sim.empty() ? "" : ", sim: {" + sim + "}") +
         "}]\n"
         "clusters:\n  - name: c\n    provider: p\n    region: r\n    node_pools:\n"
         "      - {name: h, gpu_type: H100, gpus_per_node: 4, nodes: " + std::to_string(nodes) + "}\n" + extra_pool +
         "prices:\n  - {cluster: c, gpu_type: H100, on_demand: \"1.00\"}\n" + reservations;
}

// A needs a whole node, B half of the other, C a whole node: C waits for B,
// while the 2 GPUs B leaves free are stranded (C cannot use half a node).
constexpr const char* kHandTrace =
    "id,submit,duration,gpus,gpu_type,team\n"
    "A,0,3600,4,H100,t\n"
    "B,0,1800,2,H100,t\n"
    "C,0,3600,4,H100,t\n";

TEST_F(PlanningTest, AHandMadeTraceGivesTheFiguresWorkedOutByHand) {
  Trace trace = Read("hand.csv", kHandTrace);
  ASSERT_EQ(trace.jobs.size(), 3u);
  Estate estate = Parse(SmallEstate());
  auto run = Replay(estate, trace, {});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  auto f = Figures(*run);
  EXPECT_EQ(f["all.jobs"], 3);
  EXPECT_EQ(f["all.completed"], 3);
  // Waits 0, 0 and 1800 s (C starts when B ends): nearest-rank percentiles.
  EXPECT_EQ(f["all.wait_p50_s"], 0);
  EXPECT_EQ(f["all.wait_p95_s"], 1800);
  EXPECT_EQ(f["all.wait_p99_s"], 1800);
  // Completion: A 3600, B 1800, C 1800 + 3600.
  EXPECT_EQ(f["all.completion_p50_s"], 3600);
  EXPECT_EQ(f["all.completion_p95_s"], 5400);
  EXPECT_EQ(f["all.span_hours"], 1.5);
  // Allocated: 4 x 1 h + 2 x 0.5 h + 4 x 1 h = 9 GPU-hours of 8 GPUs x 1.5 h.
  EXPECT_DOUBLE_EQ(f["all.gpu_hours"], 9);
  EXPECT_DOUBLE_EQ(f["all.utilization"], 0.75);
  EXPECT_DOUBLE_EQ(f["all.goodput"], 0.75);
  // Stranded: 2 GPUs for the half hour C waits = 1 GPU-hour over 1.5 h.
  EXPECT_DOUBLE_EQ(f["all.stranded_share"], 1.0 / 12);
  EXPECT_NEAR(f["all.stranded_gpus"], 2.0 / 3, 1e-9);
  EXPECT_DOUBLE_EQ(f["gpu:H100.stranded_share"], 1.0 / 12);
  EXPECT_DOUBLE_EQ(f["all.cost"], 9.00);
  EXPECT_DOUBLE_EQ(f["all.cost_per_completed_job"], 3.00);
  EXPECT_EQ(f["team:t.jobs"], 3);
  EXPECT_EQ(f["zone:eu.wait_p95_s"], 1800);
  EXPECT_EQ(f["all.preemptions"], 0);
}

TEST_F(PlanningTest, AReservationIsUsedFirstAndWhatItLeftUnusedIsCharged) {
  Trace trace = Read("hand.csv", kHandTrace);
  auto f = Figured(SmallEstate(2, "", "reservations:\n  - {name: r4, cluster: c, gpu_type: H100, count: 4, "
                                      "start: 2026-01-01T00:00:00Z, end: 2027-01-01T00:00:00Z, price: \"0.50\"}\n"),
                   trace);
  // A holds the 4 reserved GPUs for its hour; the reservation runs the whole
  // 1.5 h: 4 of 6 GPU-hours used, 1 GPU-hour x 0.50 x 2 unused.
  EXPECT_NEAR(f["reservation:r4.utilization"], 2.0 / 3, 1e-9);
  EXPECT_DOUBLE_EQ(f["reservation:r4.committed_cost"], 3.00);
  EXPECT_DOUBLE_EQ(f["reservation:r4.unused_cost"], 1.00);
  EXPECT_DOUBLE_EQ(f["all.unused_reservation_cost"], 1.00);
  // A at 0.50 (2.00), B and C on demand (1.00 + 4.00), plus 1.00 unused.
  EXPECT_DOUBLE_EQ(f["all.cost"], 8.00);
}

TEST_F(PlanningTest, AReservationNobodysWorkFitsIsReportedEntirelyUnused) {
  Trace trace = Read("hand.csv", kHandTrace);
  auto f = Figured(SmallEstate(2, "      - {name: a, gpu_type: A100-80GB, gpus_per_node: 8, nodes: 1}\n",
                               "reservations:\n  - {name: idle, cluster: c, gpu_type: A100-80GB, count: 8, "
                               "start: 2026-01-01T00:00:00Z, end: 2027-01-01T00:00:00Z, price: \"2.00\"}\n"),
                   trace);
  EXPECT_EQ(f["reservation:idle.utilization"], 0);
  EXPECT_DOUBLE_EQ(f["reservation:idle.committed_cost"], 8 * 1.5 * 2.00);
  EXPECT_DOUBLE_EQ(f["reservation:idle.unused_cost"], f["reservation:idle.committed_cost"]);
  // Nobody waiting can use an A100 while C waits: all 8 are stranded too.
  EXPECT_DOUBLE_EQ(f["gpu:A100-80GB.stranded_share"], 1.0 / 3);
}

// A trace of `n` jobs drawn from `seed`: 1, 2 or 4 GPUs of H100, arriving
// over a day, running up to 3 hours.
std::string RandomTrace(int n, uint64_t seed, bool failures) {
  std::mt19937_64 rng(seed);
  std::string csv = "submit,duration,gpus,team,status\n";
  for (int i = 0; i < n; ++i) {
    csv += std::to_string(rng() % 86400) + "," + std::to_string(60 + rng() % 10800) + "," +
           std::to_string(1 << (rng() % 3)) + ",t" + std::to_string(rng() % 3) + "," +
           (failures && rng() % 5 == 0 ? "failed" : "completed") + "\n";
  }
  return csv;
}

TEST_F(PlanningTest, TheSameSeedGivesTheSameReportAndSeedsSpreadIt) {
  Trace trace = Read("r.csv", RandomTrace(300, 7, true));
  Estate estate = Parse(SmallEstate(6, "", "", "node_failure_per_hour: 0.3"));
  auto report = [&](uint64_t seed, int seeds) {
    PlanRequest req;
    req.estates.push_back({"e", estate});
    req.options.seed = seed;
    req.seeds = seeds;
    auto j = PlanTrace(trace, req);
    EXPECT_TRUE(j.ok()) << j.status().ToString();
    nlohmann::json out = j.ok() ? *j : nlohmann::json();
    out.erase("wall_seconds");
    return out;
  };
  auto a = report(5, 3), b = report(5, 3), c = report(6, 3);
  EXPECT_EQ(a.dump(), b.dump());
  EXPECT_NE(a.dump(), c.dump());
  // Node failures cost attempts, and seeds differ in how many.
  const auto& h = a["estates"][0]["headline"];
  EXPECT_GT(h["cost"]["median"].get<double>(), 0);
  EXPECT_LE(h["cost"]["p5"].get<double>(), h["cost"]["median"].get<double>());
  EXPECT_LE(h["cost"]["median"].get<double>(), h["cost"]["p95"].get<double>());
  EXPECT_LT(h["cost"]["p5"].get<double>(), h["cost"]["p95"].get<double>());
}

TEST_F(PlanningTest, AddingCapacityNeverLengthensTheMedianWait) {
  for (uint64_t seed : {1, 2, 3, 4, 5}) {
    Trace trace = Read("p" + std::to_string(seed) + ".csv", RandomTrace(400, seed, false));
    double last = -1;
    for (int nodes : {3, 4, 6, 9, 14}) {
      double median = Figured(SmallEstate(nodes), trace)["all.wait_p50_s"];
      if (last >= 0) {
        EXPECT_LE(median, last) << "seed " << seed << ", " << nodes << " nodes";
      }
      last = median;
    }
  }
}

TEST_F(PlanningTest, TracesAreReadInEveryFormAndBadRowsNamed) {
  Trace csv = Read("own.csv",
                   "submit,end,gpus,gpu_type,nodes,team,priority,spot,status,zone,gpu_util\n"
                   "10,70,8,H100|A100-80GB,2,nlp,high,true,failed,eu,0.5\n"
                   "5,6,0,,,,,,,,\n"
                   "0,100,1,,,,,,,,\n");
  ASSERT_EQ(csv.jobs.size(), 2u);
  EXPECT_EQ(csv.cpu_only_skipped, 1);
  const TraceJob& j = csv.jobs[1];  // sorted by submit
  EXPECT_EQ(j.submit_s, 10);
  EXPECT_EQ(j.duration_s, 60);
  EXPECT_EQ(j.nodes, 2);
  EXPECT_EQ(j.priority, 100);
  EXPECT_TRUE(j.spot);
  EXPECT_EQ(j.status, TraceStatus::kFailed);
  EXPECT_EQ(csv.type_sets[j.types], (std::vector<std::string>{"A100-80GB", "H100"}));
  EXPECT_EQ(csv.teams[j.team], "nlp");
  EXPECT_EQ(csv.zones[j.zone], "eu");
  EXPECT_EQ(j.util_permille, 500);
  EXPECT_TRUE(csv.has_utilization);

  Trace jsonl = Read("own.jsonl", "{\"submit\": 3, \"duration\": 60, \"gpus\": 2, \"spot\": false}\n\n"
                                  "{\"submit\": 1, \"duration\": 5, \"gpus\": 1, \"team\": \"a\"}\n");
  ASSERT_EQ(jsonl.jobs.size(), 2u);
  EXPECT_EQ(jsonl.jobs[0].submit_s, 1);

  struct Bad {
    std::string name, text, says;
  } bad[] = {
      {"b1.csv", "submit,duration,gpus\n0,10,x\n", "b1.csv:2: gpus: expected a number"},
      {"b2.csv", "submit,gpus\n0,1\n", "b2.csv:2: duration: missing"},
      {"b3.csv", "submit,duration,gpus,status\n0,1,1,lost\n", "b3.csv:2: status: expected completed"},
      {"b4.csv", "submit,duration,gpus\n-5,1,1\n", "b4.csv:2: submit: must be between"},
      {"b5.jsonl", "{\"submit\": 0, \"duration\": 1, \"gpus\": 1}\n[1]\n", "b5.jsonl:2: line: expected a JSON object"},
      {"b6.jsonl", "{\"submit\": 0, \"duration\": 1, \"gpus\": {\"a\": {\"b\": {\"c\": {\"d\": 1}}}}}\n", "b6.jsonl:1"},
      {"b7.csv", "submit,duration,gpus,priority\n0,1,1,urgent\n", "b7.csv:2: priority: expected 0-1000"},
  };
  for (const auto& b : bad) {
    auto t = ReadTrace(Write(b.name, b.text), TraceFormat::kCauseway);
    ASSERT_FALSE(t.ok()) << b.name;
    EXPECT_NE(t.status().message().find(b.says), std::string::npos) << t.status().message();
  }
  // Bounds: rows and line length.
  TraceLimits small;
  small.max_jobs = 2;
  EXPECT_FALSE(ReadTrace(Write("many.csv", RandomTrace(3, 1, false)), TraceFormat::kCauseway, small).ok());
  small.max_line = 10;
  EXPECT_FALSE(ReadTrace(Write("long.jsonl", "{\"submit\": 0, \"duration\": 1, \"gpus\": 1}\n"), TraceFormat::kCauseway, small).ok());
  EXPECT_EQ(ReadTrace((dir_ / "absent.csv").string(), TraceFormat::kCauseway).status().code(), Code::kNotFound);
  EXPECT_FALSE(ParseTraceFormat("philly").ok());
}

TEST_F(PlanningTest, TheAlibabaFormatsReadTheirColumnsAndMachines) {
  Trace pods = Read("openb_pod_list_x.csv",
                    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
                    "scheduled_time\n"
                    "p0,1000,1024,1,500,,LS,Running,0,1000,10\n"
                    "p1,1000,1024,0,0,,BE,Running,0,1000,0\n"
                    "p2,1000,1024,2,1000,V100M32|T4,BE,Failed,50,5000,60\n",
                    TraceFormat::kAlibaba2023);
  ASSERT_EQ(pods.jobs.size(), 2u);
  EXPECT_EQ(pods.cpu_only_skipped, 1);
  EXPECT_EQ(pods.jobs[0].duration_s, 990);  // scheduled to deleted
  EXPECT_EQ(pods.jobs[0].util_permille, 500);
  EXPECT_EQ(pods.jobs[0].priority, 100);
  EXPECT_EQ(pods.jobs[1].status, TraceStatus::kFailed);
  EXPECT_EQ(pods.type_sets[pods.jobs[1].types], (std::vector<std::string>{"T4", "V100M32"}));
  EXPECT_TRUE(pods.estate_yaml.empty());  // no node list beside it

  Write("openb_node_list_gpu_node.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,8,V100M32\nn1,1,1,8,V100M32\nn2,1,1,2,T4\n");
  Trace with_nodes = Read("openb_pod_list_y.csv",
                          "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
                          "deletion_time,scheduled_time\np0,1,1,1,1000,,LS,Running,0,100,0\n",
                          TraceFormat::kAlibaba2023);
  auto estate = TraceEstate(with_nodes);
  ASSERT_TRUE(estate.ok()) << estate.status().ToString();
  ASSERT_EQ(estate->clusters.size(), 1u);
  EXPECT_EQ(estate->clusters[0].TotalGpus(), 18);

  Trace dlrm = Read("dlrm.csv",
                    "instance_sn,role,app_name,cpu_request,cpu_limit,gpu_request,gpu_limit,rdma_request,rdma_limit,"
                    "memory_request,memory_limit,disk_request,disk_limit,max_instance_per_node,creation_time,"
                    "scheduled_time,deletion_time\n"
                    "i0,HN,app_1,12,12,1,1,25,25,120,120,640,800,8,,,\n"
                    "i1,CN,app_1,12,12,0,0,25,25,120,120,640,800,8,5,5,50\n"
                    "i2,HN,app_2,12,12,1,1,25,25,120,120,640,800,8,100,160,1000\n",
                    TraceFormat::kAlibabaDlrm2025);
  ASSERT_EQ(dlrm.jobs.size(), 2u);
  EXPECT_EQ(dlrm.jobs[0].submit_s, 0);
  EXPECT_EQ(dlrm.jobs[0].duration_s, 1000);  // alive across the window: to its last timestamp
  EXPECT_EQ(dlrm.jobs[1].duration_s, 840);
  EXPECT_EQ(dlrm.teams[dlrm.jobs[1].team], "app_2");
}

TEST_F(PlanningTest, TheSharedTracesReadWithTheirPublishedCounts) {
  fs::path data = SharedData();
  fs::path pods = data / "traces/alibaba-gpu-2023/openb_pod_list_default.csv";
  fs::path dlrm = data / "traces/alibaba-dlrm-2025/disaggregated_DLRM_trace.csv";
  if (!fs::exists(pods) || !fs::exists(dlrm)) GTEST_SKIP() << "the shared traces are not in " << data << " (set CAUSEWAY_SHARED_DATA)";
  auto a = ReadTrace(pods.string(), TraceFormat::kAlibaba2023);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->jobs.size() + static_cast<size_t>(a->cpu_only_skipped), 8152u);  // the README's 8,152 tasks
  auto estate = TraceEstate(*a);
  ASSERT_TRUE(estate.ok());
  int gpus = 0;
  for (const auto& c : estate->clusters) gpus += c.TotalGpus();
  EXPECT_EQ(gpus, 6212);
  auto d = ReadTrace(dlrm.string(), TraceFormat::kAlibabaDlrm2025);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->jobs.size(), 7386u);  // SCHEMA.md: 7,386 HN rows
  EXPECT_EQ(d->cpu_only_skipped, 16485);
  EXPECT_EQ(d->teams.size() - 1, 156u);
  auto run = Replay(*estate, *a, {});
  ASSERT_TRUE(run.ok());
  auto f = Figures(*run);
  EXPECT_EQ(f["all.jobs"], 7064);
  EXPECT_EQ(f["all.refused"], 0);
}

TEST_F(PlanningTest, ChangesAddReservedCapacityRemoveClustersAndSetPrices) {
  Estate estate = Parse(SmallEstate(2));
  using K = EstateChange::Kind;
  auto add = ParseChange(K::kAddReservation, "c:H100:6:12mo:0.80");
  ASSERT_TRUE(add.ok()) << add.status().ToString();
  auto price = ParseChange(K::kPrice, "c:H100:2.5:1.1");
  ASSERT_TRUE(price.ok());
  Timestamp start = *ParseRfc3339("2026-01-31T00:00:00Z");
  auto said = ApplyChanges(estate, {*add, *price}, start);
  ASSERT_TRUE(said.ok()) << said.status().ToString();
  EXPECT_EQ(estate.clusters[0].node_pools[0].nodes, 4);  // 6 GPUs: 2 more nodes of 4
  ASSERT_EQ(estate.reservations.size(), 1u);
  EXPECT_EQ(estate.reservations[0].count, 6);
  EXPECT_EQ(FormatRfc3339(estate.reservations[0].end).substr(0, 10), "2027-01-31");
  EXPECT_EQ(estate.prices[0].on_demand.micros(), 2'500'000);
  EXPECT_EQ(estate.prices[0].spot->micros(), 1'100'000);
  EXPECT_EQ(said->size(), 2u);
  auto gone = ParseChange(K::kRemoveCluster, "c");
  ASSERT_TRUE(ApplyChanges(estate, {*gone}, start).ok());
  EXPECT_TRUE(estate.clusters.empty());
  EXPECT_TRUE(estate.reservations.empty());
  EXPECT_TRUE(estate.prices.empty());

  for (auto [kind, text] : {std::pair{K::kAddReservation, "c:H100:6:12mo"}, {K::kAddReservation, "c:H100:0:12mo:1"},
                            {K::kAddReservation, "c:H100:6:12w:1"}, {K::kAddReservation, "c:H100:6:12mo:-1"},
                            {K::kPrice, "c:H100"}, {K::kPrice, "c:H100:abc"}, {K::kRemoveCluster, "a:b"}}) {
    EXPECT_FALSE(ParseChange(kind, text).ok()) << text;
  }
  Estate fresh = Parse(SmallEstate(2));
  auto elsewhere = ParseChange(K::kAddReservation, "nowhere:H100:1:1mo:1");
  auto status = ApplyChanges(fresh, {*elsewhere}, start).status();
  EXPECT_NE(status.message().find("no cluster \"nowhere\" (the estate has c)"), std::string::npos) << status.message();
  auto no_pool = ParseChange(K::kAddReservation, "c:B200:1:1mo:1");
  EXPECT_NE(ApplyChanges(fresh, {*no_pool}, start).status().message().find("has no B200 pool"), std::string::npos);
}

TEST_F(PlanningTest, TheReportComparesEstatesInEveryForm) {
  Trace trace = Read("hand.csv", kHandTrace);
  PlanRequest req;
  req.estates.push_back({"two nodes", Parse(SmallEstate(2))});
  req.changes.push_back(*ParseChange(EstateChange::Kind::kAddReservation, "c:H100:4:1mo:0.50"));
  req.seeds = 2;
  auto report = PlanTrace(trace, req);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const auto& estates = (*report)["estates"];
  ASSERT_EQ(estates.size(), 2u);
  EXPECT_EQ(estates[1]["name"], "two nodes + changes");
  EXPECT_EQ(estates[1]["changes"].size(), 1u);
  // With a third node C starts at once: its wait is gone.
  EXPECT_EQ(estates[0]["headline"]["wait_p95_s"]["median"], 1800);
  EXPECT_EQ(estates[1]["headline"]["wait_p95_s"]["median"], 0);
  bool wait_changed = false;
  for (const auto& d : (*report)["differences"]) wait_changed |= d["figure"] == "all.wait_p95_s" && d["value"] == 0;
  EXPECT_TRUE(wait_changed);
  std::string table = ReportTable(*report);
  EXPECT_NE(table.find("queue wait p95"), std::string::npos);
  EXPECT_NE(table.find("Largest changes against two nodes"), std::string::npos);
  std::string html = ReportHtml(*report);
  EXPECT_EQ(html.rfind("<!doctype html>", 0), 0u);
  EXPECT_NE(html.find("<polyline class=\"series\""), std::string::npos);
  EXPECT_NE(html.find("Cost per completed job"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);  // nothing fetched
  EXPECT_EQ(html.find("href="), std::string::npos);
  // Changes name their figure and unit, in words, and none is smaller than
  // its unit shows (a share moving 0.0046 to 0 is not "−100 %").
  for (const auto& d : (*report)["differences"]) {
    std::string figure = d["figure"];
    EXPECT_FALSE(d["label"].get<std::string>().empty()) << figure;
    EXPECT_EQ(d["label"].get<std::string>().find('_'), std::string::npos) << d["label"];
    EXPECT_GE(std::abs(d["change"].get<double>()), FigureResolution(figure)) << figure;
    EXPECT_FALSE(d["base_text"].get<std::string>().empty());
  }
  EXPECT_NE(html.find(">10 min<"), std::string::npos) << "the wait chart's axis is in words on a log scale";
  EXPECT_NE(html.find("own attempts"), std::string::npos) << "what differs between the headline and the groups is said";
  // Node failures are counted with the other figures.
  EXPECT_TRUE(estates[0]["headline"].contains("node_failures")) << estates[0]["headline"].dump();
}

TEST(PlanningFiguresTest, FiguresAreNamedWithTheirUnitsAndSeparators) {
  EXPECT_EQ(FigureLabel("all.wait_p95_s"), "queue wait p95");
  EXPECT_EQ(FigureLabel("team:nlp.cost_per_completed_job"), "team:nlp: cost per completed job (own attempts)");
  EXPECT_EQ(FigureLabel("all.cost_per_completed_job"), "cost per completed job (with unused reservations)");
  EXPECT_EQ(FigureLabel("gpu:H100.stranded_share"), "gpu:H100: stranded share of capacity");
  EXPECT_EQ(FigureUnit("all.utilization", "EUR"), "%");
  EXPECT_EQ(FigureUnit("all.cost", "EUR"), "EUR");
  EXPECT_EQ(FigureText("all.cost", 1234567.5, "USD"), "1,234,567.50 USD");
  EXPECT_EQ(FigureText("all.jobs", 125303, "USD"), "125,303");
  EXPECT_EQ(FigureText("all.goodput", 0.0046, "USD"), "0.5%");
  EXPECT_DOUBLE_EQ(FigureResolution("all.utilization"), 0.001);
  EXPECT_EQ(Utf8Width("—"), 1u);
  EXPECT_EQ(Utf8Width("a—b"), 3u);
}

// Two teams over four minutes: a's demand passes its quota of 4 twice (by 2
// and 4), b never uses its 2 GPUs.
TEST_F(PlanningTest, DemandCurvesAreCheckedAgainstQuotasAndReservationsByHand) {
  std::string head = "time,total_gpu_num,running_gpu_num,pending_gpu_num\n";
  fs::create_directories(dir_ / "vcs/a");
  fs::create_directories(dir_ / "vcs/b");
  Write("vcs/a/cluster_sequence_vc.csv.gz", head + "t0,4,4,2\nt1,4,4,0\nt2,4,2,0\nt3,4,4,4\n");
  Write("vcs/b/cluster_sequence_vc.csv.gz", head + "t0,2,0,0\nt1,2,0,0\nt2,2,0,0\nt3,2,0,0\n");
  auto trace = ReadHeliosEarth((dir_ / "vcs").string());
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_EQ(trace->teams.size(), 2u);
  DemandOptions o;
  o.reservation = 5;
  o.reserved_price = 1.0;
  o.on_demand_price = 2.0;
  auto report = DemandReport(*trace, o);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const auto& a = (*report)["teams"][0];
  EXPECT_EQ(a["team"], "a");
  EXPECT_EQ(a["quota"], 4);
  EXPECT_DOUBLE_EQ(a["demand"]["mean"].get<double>(), 5.0);  // 6, 4, 2, 8
  EXPECT_EQ(a["demand"]["max"], 8);
  EXPECT_DOUBLE_EQ(a["over_quota_share"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(a["unmet_gpu_hours"].get<double>(), 6.0 / 60);
  EXPECT_DOUBLE_EQ(a["idle_quota_gpu_hours"].get<double>(), 2.0 / 60);
  EXPECT_DOUBLE_EQ(a["running_mean"].get<double>(), 3.5);
  const auto& b = (*report)["teams"][1];
  EXPECT_DOUBLE_EQ(b["idle_quota_gpu_hours"].get<double>(), 8.0 / 60);
  // Reserving 5 for demand 6, 4, 2, 8: 5 + 4 + 2 + 5 = 16 of 20 used.
  const auto& r = (*report)["reservation"];
  EXPECT_DOUBLE_EQ(r["utilization"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(r["unused_gpu_hours"].get<double>(), 4.0 / 60);
  EXPECT_DOUBLE_EQ(r["above_gpu_hours"].get<double>(), 4.0 / 60);
  EXPECT_DOUBLE_EQ(r["cost"].get<double>(), 5 * 4.0 / 60 * 1.0 + 4.0 / 60 * 2.0);
  // Half the on-demand price: worth it for GPUs wanted at least half the
  // time: demand's 50th percentile (4).
  EXPECT_EQ((*report)["break_even_reservation"]["gpus"], 4);
  EXPECT_NE(DemandTable(*report).find("break-even reservation: 4 GPUs"), std::string::npos) << DemandTable(*report);

  o.quotas["a"] = 8;
  EXPECT_DOUBLE_EQ((*DemandReport(*trace, o))["teams"][0]["over_quota_share"].get<double>(), 0);
  o.quotas["nobody"] = 1;
  EXPECT_FALSE(DemandReport(*trace, o).ok());
  Write("vcs/b/cluster_sequence_vc.csv.gz", head + "t0,2,x,0\n");
  auto bad = ReadHeliosEarth((dir_ / "vcs").string());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cluster_sequence_vc.csv.gz:2: running_gpu_num: expected a number"),
            std::string::npos)
      << bad.status().message();
  EXPECT_EQ(ReadHeliosEarth((dir_ / "none").string()).status().code(), Code::kNotFound);
}

TEST_F(PlanningTest, HeliosEarthReadsWithItsPublishedQuotasAndMeans) {
  fs::path data = SharedData();
  fs::path vcs = data / "traces/helios-earth-2020/Earth_vcs";
  if (!fs::exists(vcs)) GTEST_SKIP() << "Helios Earth is not in " << data << " (set CAUSEWAY_SHARED_DATA)";
  auto trace = ReadHeliosEarth(vcs.string());
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->teams.size(), 16u);
  auto report = DemandReport(*trace, {});
  ASSERT_TRUE(report.ok());
  EXPECT_EQ((*report)["steps"], 44640);  // SCHEMA.md: one row a minute of May 2020
  for (const auto& t : (*report)["teams"]) {
    if (t["team"] != "vc6YE") continue;
    EXPECT_EQ(t["quota"], 208);  // SCHEMA.md: vc6YE 208 / 187.7 mean running
    EXPECT_NEAR(t["running_mean"].get<double>(), 187.7, 0.05);
  }
}

}  // namespace
}  // namespace causeway::planning
