// `causeway acceptance data`: the dataset's loading pattern (the job's own
// read command) run on a chosen cluster at the version's full size, with
// the read's time and throughput measured, the flow of the data written
// down (which verified replica, copied to the node or read across regions,
// at what price), and the cost per completed job with the data's movement
// included.
#include <chrono>
#include <map>

#include "causeway/resources.h"
#include "cli/acceptance_kit.h"
#include "cost/focus.h"

namespace causeway::cli::acceptance {
namespace {

constexpr const char* kReadMarker = "causeway-read";

// The default loading pattern: every object read once, in full.
constexpr const char* kDefaultRead = "find \"$CAUSEWAY_DATA_DIR\" -type f -exec cat {} + | wc -c";

}  // namespace

json RunData(const Globals& g, const Options& o, Steps& steps) {
  Session admin(g, AdminToken(g));
  json subject = {{"team", o.team}, {"dataset", o.dataset}, {"cluster", o.cluster}};
  std::string tag = Tag();

  Step& s1 = AddStep(steps, "dataset " + o.dataset + " is registered with a verified replica");
  auto version = admin.Do("GET", "/v1/datasets/" + net::UrlEncode(o.dataset));
  if (version.status != 200) {
    s1.detail = ErrorOf(version);
    return subject;
  }
  const json& v = version.body;
  std::vector<json> verified;
  for (const json& r : v["replicas"]) {
    if (r.value("state", "") == "verified") verified.push_back(r);
  }
  s1.ok = !verified.empty();
  s1.detail = v.value("dataset", "") + "@" + v.value("version", "") + " " + v.value("digest", "") + ": " +
              std::to_string(v.value("objects", 0)) + " objects, " + std::to_string(v.value("bytes", int64_t{0})) +
              " bytes, verified at " + std::to_string(verified.size()) + " location(s)";
  s1.evidence = Evidence(admin, "dataset/" + v.value("dataset", "") + "@" + v.value("version", ""), "dataset.");
  subject["digest"] = v.value("digest", "");
  subject["bytes"] = v.value("bytes", int64_t{0});
  subject["objects"] = v.value("objects", 0);
  if (!s1.ok) return subject;

  EstateView estate = ReadEstate(admin);
  Step& s2 = AddStep(steps, "the data's way to " + o.cluster);
  auto it = estate.clusters.find(o.cluster);
  if (it == estate.clusters.end()) {
    s2.detail = "no cluster \"" + o.cluster + "\" in the estate";
    return subject;
  }
  const ClusterInfo& c = it->second;
  std::string place = c.provider + "/" + c.region;
  // The replica the job reads: the one in the cluster's region, else the
  // nearest (same provider, then any).
  const json* from = nullptr;
  for (const json& r : verified) {
    if (r.value("place", "") == place) from = &r;
  }
  for (const json& r : verified) {
    if (!from && r.value("place", "").rfind(c.provider + "/", 0) == 0) from = &r;
  }
  if (!from) from = &verified.front();
  bool local = from->value("place", "") == place;
  std::string url = from->value("url", "");
  json flow = {{"replica", from->value("location", "")},
               {"replica_place", from->value("place", "")},
               {"cluster_place", place},
               {"way", local ? "local" : "across regions"}};
  s2.ok = true;
  s2.detail = std::string(local ? "data local: " : "read across regions from ") + from->value("location", "") + " (" +
              from->value("place", "") + ") to " + o.cluster + " (" + place + ")";
  subject["flow"] = flow;

  Step& s3 = AddStep(steps, "run the loading pattern on " + o.cluster);
  std::string dir = "/tmp/causeway-data-" + tag;
  std::string read = o.read_command.empty() ? kDefaultRead : o.read_command;
  bool cpu_only = c.first_type.empty() || c.first_type == kCpuType;
  std::string resources = cpu_only ? "{cpus: 1, infra: " + place + "}"
                                   : "{accelerators: {" + c.first_type + ": 1}, infra: " + place + "}";
  std::string spec = "name: acceptance-data-" + tag + "\nresources: " + resources + "\nlabels: {team: " + o.team +
                     ", owner: causeway-acceptance}\ndatasets: [" + o.dataset + "]\nallow_remote_data: true\n" +
                     "envs: {CAUSEWAY_DATA_DIR: " + dir + "}\n";
  if (!url.empty()) spec += "file_mounts:\n  " + dir + ": " + url + "\n";
  spec += "run: |\n  start=$(date +%s%N)\n  " + read + "\n  end=$(date +%s%N)\n  echo \"" + kReadMarker +
          "-ns=$((end - start))\"\nsim: {duration: 10m}\n";
  auto submitted = admin.Do("POST", "/v1/jobs", {{"spec", spec}});
  if (submitted.status != 201) {
    s3.detail = ErrorOf(submitted);
    return subject;
  }
  std::string job = submitted.body["job"].value("id", "");
  subject["job"] = job;
  json detail;
  std::string state;
  s3.ms = TimeUntil(
      [&] {
        auto j = admin.Do("GET", "/v1/jobs/" + job);
        if (j.status != 200) return false;
        detail = j.body;
        state = detail.value("state", "");
        return state == "succeeded" || state == "failed" || state == "cancelled";
      },
      std::chrono::seconds(o.job_timeout_s));
  std::string ran_on;
  for (const json& a : detail.value("attempts", json::array())) ran_on = a.value("cluster", "");
  s3.ok = state == "succeeded" && ran_on == o.cluster;
  s3.detail = "job " + job + " " + (state.empty() ? "did not finish in time" : state) +
              (ran_on.empty() ? "" : " on " + ran_on);
  s3.evidence = Evidence(admin, "job/" + job, "job.");
  if (state.empty()) {
    admin.Do("POST", "/v1/jobs/" + job + "/cancel", {{"reason", "acceptance data: timed out"}});
  }

  Step& s4 = AddStep(steps, "read throughput and time");
  int64_t read_ns = -1, read_bytes = -1;
  // The job's output: the bytes the read printed, then the marker line.
  std::string text = admin.Text("/v1/jobs/" + job + "/logs").second;
  std::string last_number;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    std::string marker = std::string(kReadMarker) + "-ns=";
    if (line.rfind(marker, 0) == 0) {
      read_ns = std::atoll(line.c_str() + marker.size());
      if (!last_number.empty()) read_bytes = std::atoll(last_number.c_str());
    } else if (!line.empty() && line.find_first_not_of("0123456789 ") == std::string::npos) {
      last_number = line;
    }
  }
  int64_t bytes = read_bytes >= 0 ? read_bytes : v.value("bytes", int64_t{0});
  if (read_ns > 0) {
    double seconds = static_cast<double>(read_ns) / 1e9;
    double mb_s = static_cast<double>(bytes) / 1e6 / seconds;
    s4.ok = true;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%lld bytes read in %.3f s: %.1f MB/s", static_cast<long long>(bytes), seconds, mb_s);
    s4.detail = buf;
    subject["read"] = {{"bytes", bytes}, {"seconds", seconds}, {"mb_per_s", mb_s}};
  } else {
    // A simulated cluster runs no commands: nothing to measure there.
    s4.ok = true;
    s4.not_applicable = true;
    s4.detail = "the job printed no read time (a simulated cluster runs no commands)";
  }

  Step& s5 = AddStep(steps, "cost per completed job, data movement included");
  int64_t compute = 0, data = 0;
  for (const json& a : detail.value("attempts", json::array())) compute += a.value("cost_micros", int64_t{0});
  for (const json& ch : detail.value("data_charges", json::array())) data += ch.value("amount_micros", int64_t{0});
  s5.ok = state == "succeeded";
  auto money = cost::MicrosText;
  s5.detail = "compute " + money(compute) + " + moving data " + money(data) + " = " + money(compute + data) +
              (s5.ok ? " for the completed job" : " (the job did not complete)");
  s5.evidence = Evidence(admin, "job/" + job, "job.finish");
  subject["cost"] = {{"compute", money(compute)},
                     {"data", money(data)},
                     {"per_completed_job", s5.ok ? json(money(compute + data)) : json(nullptr)},
                     {"data_charges", detail.value("data_charges", json::array())}};
  subject["summary"] = v.value("dataset", "") + "@" + v.value("version", "") + " read on " + o.cluster + " (" +
                       (local ? "data local" : "across regions") + ")";
  return subject;
}

}  // namespace causeway::cli::acceptance
