// Traces for planning: jobs as they arrived somewhere (a public GPU cluster
// trace, Causeway's own trace format, or the ledger's history), read into
// one compact form that a replay submits to the production scheduler.
//
// Causeway's own format (docs/planning.md), CSV with a header or JSON lines
// with the same keys:
//   submit     seconds after the trace's start (required)
//   duration   seconds one successful attempt runs, or
//   end        seconds after the start it ended (one of the two required)
//   gpus       GPUs per node (required; 0 rows are CPU-only and skipped)
//   gpu_type   "H200", alternatives "H100|A100-80GB", or empty for any
//   nodes      default 1
//   team, priority (0-1000 or low|normal|high|critical), spot (true|false),
//   status     completed | failed | cancelled (default completed),
//   zone       residency zone the job is bound to,
//   gpu_util   0-1: the share of its GPUs' time doing useful work (goodput)
//   id         ignored; kept for the reader's own reference
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "causeway/clock.h"
#include "causeway/job_spec.h"
#include "causeway/records.h"
#include "causeway/status.h"

namespace causeway::planning {

enum class TraceStatus : uint8_t { kCompleted, kFailed, kCancelled };
std::string_view TraceStatusName(TraceStatus s);

// One job, compact (a million fit in about 40 MB): names are indices into
// the trace's tables.
struct TraceJob {
  int64_t submit_s = 0;    // after the trace's start
  int64_t duration_s = 0;  // of one successful attempt, at least 1
  int32_t gpus = 0;        // per node
  int32_t nodes = 1;
  int16_t priority = 50;
  uint16_t team = 0;   // Trace::teams ("" at 0)
  uint16_t types = 0;  // Trace::type_sets (0: any GPU type)
  uint16_t zone = 0;   // Trace::zones ("" at 0)
  uint16_t util_permille = 1000;  // share of GPU time doing useful work
  bool spot = false;
  TraceStatus status = TraceStatus::kCompleted;
};

// What the ledger recorded of one attempt (history traces).
struct RecordedAttempt {
  int number = 0;
  int64_t start_us = 0;
  int64_t end_us = -1;  // -1: still running when read
  std::string cluster, pool;
  std::string state;  // "running", or how it ended: succeeded, failed, preempted, ...
  int exit_code = 0;
};

// A trace read from the ledger: each job's recorded id, full spec, exact
// submission time and attempts, beside its TraceJob. Replays submit the
// recorded spec itself (its infra, residency, datasets and all).
struct History {
  Timestamp origin;  // the trace's time 0
  std::vector<std::string> ids;
  std::vector<JobSpec> specs;
  std::vector<int64_t> submit_us;  // after origin
  std::vector<std::string> after;  // the pipeline step each runs after ("" for none)
  std::vector<JobState> final_state;
  std::vector<std::vector<RecordedAttempt>> attempts;
};

struct Trace {
  std::string format;  // as given to ReadTrace
  std::string source;  // the file
  std::vector<TraceJob> jobs;  // by submit time, stable
  std::vector<std::string> teams{""};
  std::vector<std::vector<std::string>> type_sets{{}};  // each sorted
  std::vector<std::string> zones{""};
  bool has_utilization = false;  // some job gave its useful share
  int64_t cpu_only_skipped = 0;  // rows without GPUs: nothing for GPU planning
  // The trace's own cluster as an estate, for traces that describe their
  // machines (alibaba-2023's node list): `--estate trace`.
  std::string estate_yaml;
  // How the source was read where it is not one-to-one, in words.
  std::vector<std::string> notes;
  // Set for a trace read from the ledger (planning/history.h).
  std::shared_ptr<const History> history;

  // The index of `name` in `table` (teams or zones), added when new; and of
  // a set of GPU types. Past 65,534 names every new one maps to the last
  // index, and Finish refuses the trace.
  uint16_t Intern(std::vector<std::string>& table, const std::string& name);
  uint16_t InternTypes(std::vector<std::string> types);
  // Sorts jobs by submit time (stable) and checks the tables' sizes.
  Status Finish();

 private:
  std::map<std::pair<int, std::string>, uint16_t> index_;  // (0 teams, 1 zones, 2 type sets; key) -> index
};

enum class TraceFormat { kCauseway, kAlibaba2023, kAlibabaDlrm2025 };
inline constexpr std::string_view kTraceFormats = "causeway, alibaba-2023, alibaba-dlrm-2025";
Result<TraceFormat> ParseTraceFormat(std::string_view name);

struct TraceLimits {
  size_t max_jobs = 5'000'000;
  size_t max_names = 60'000;  // distinct teams, zones, GPU type sets each
  size_t max_line = 64 * 1024;  // JSON lines
};

// Reads `path` in `format`. alibaba-2023 takes a pod list
// (openb_pod_list_*.csv) and reads openb_node_list_gpu_node.csv beside it
// for its estate. kInvalidArgument names the file, line and field; kNotFound
// the file.
Result<Trace> ReadTrace(const std::string& path, TraceFormat format, const TraceLimits& limits = {});

}  // namespace causeway::planning
