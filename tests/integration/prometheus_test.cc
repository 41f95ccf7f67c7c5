// GPU telemetry from a real Prometheus: DCGM-exporter series are back-filled
// with `promtool tsdb create-blocks-from openmetrics` (no test waits for a
// scrape), Prometheus is started on a free loopback port and stopped by pid,
// and the reaper judges the series read back through its HTTP API. Skipped
// when Prometheus is not installed (scripts/install-deps.sh test).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "causeway/subprocess.h"
#include "net/http_client.h"
#include "server_process.h"
#include "telemetry/prometheus.h"
#include "telemetry/reaper.h"

namespace causeway::testing {
namespace {

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

class Prometheus {
 public:
  // Back-fills `openmetrics` into DIR/data and starts Prometheus on it.
  Prometheus(const std::string& dir, const std::string& openmetrics) {
    std::ofstream(dir + "/metrics.om") << openmetrics;
    std::ofstream(dir + "/prometheus.yml") << "global:\n  scrape_interval: 1h\n";
    auto fill = RunProcess({"promtool", "tsdb", "create-blocks-from", "openmetrics", dir + "/metrics.om", dir + "/data"},
                           {}, "", std::chrono::seconds(60));
    EXPECT_TRUE(fill.ok() && fill->exit_code == 0) << (fill.ok() ? fill->err : fill.status().ToString());
    port_ = FreePort();
    // Made before the fork: the child only execs (see Spawn in server_process.cc).
    std::string log = dir + "/prometheus.log";
    std::string listen = "--web.listen-address=127.0.0.1:" + std::to_string(port_);
    std::string storage = "--storage.tsdb.path=" + dir + "/data";
    std::string config = "--config.file=" + dir + "/prometheus.yml";
    int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    pid_ = ::fork();
    if (pid_ == 0) {
      if (log_fd >= 0) ::dup2(log_fd, STDERR_FILENO);
      ::execlp("prometheus", "prometheus", config.c_str(), storage.c_str(), listen.c_str(), nullptr);
      ::_exit(127);
    }
    if (log_fd >= 0) ::close(log_fd);
  }
  ~Prometheus() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  // Waits (by asking) until Prometheus is ready.
  bool Ready() {
    net::HttpClient client("127.0.0.1", static_cast<uint16_t>(port_), std::chrono::seconds(2));
    return Eventually(
        [&] {
          auto r = client.Send("GET", "/-/ready");
          return r.ok() && r->status == 200;
        },
        std::chrono::seconds(30));
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int port_ = 0;
  pid_t pid_ = -1;
};

bool PrometheusInstalled() {
  return std::system("command -v prometheus > /dev/null && command -v promtool > /dev/null") == 0;
}

// Unix seconds, `ago` seconds before now.
int64_t SecondsAgo(int64_t ago) {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
             .count() -
         ago;
}

// One DCGM series in OpenMetrics: a sample a minute for `minutes`, ending at `end`.
std::string Series(const std::string& labels, int percent, int64_t end, int minutes) {
  std::string out;
  for (int m = minutes; m >= 0; --m) {
    out += "DCGM_FI_DEV_GPU_UTIL{" + labels + "} " + std::to_string(percent) + " " + std::to_string(end - m * 60) + "\n";
  }
  return out;
}

TEST(PrometheusTest, DcgmSeriesReadBackAndJudged) {
  if (!PrometheusInstalled()) GTEST_SKIP() << "Prometheus is not installed (scripts/install-deps.sh test)";
  TempDir dir("prometheus");
  // An hour of one-minute samples ending a minute ago: job_idle's GPU 1
  // does nothing, job_busy works, a GPU without a job label is ignored.
  const int64_t end = SecondsAgo(60);
  std::string om = "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n";
  auto series = [&](const std::string& labels, int percent) { om += Series(labels, percent, end, 60); };
  series("gpu=\"0\",causeway_job=\"job_idle\",causeway_attempt=\"1\"", 88);
  series("gpu=\"1\",causeway_job=\"job_idle\",causeway_attempt=\"1\"", 2);
  series("gpu=\"0\",causeway_job=\"job_busy\",causeway_attempt=\"1\"", 91);
  series("gpu=\"0\"", 0);
  om += "# EOF\n";
  Prometheus prometheus(dir.path(), om);
  ASSERT_TRUE(prometheus.Ready()) << "Prometheus did not become ready";

  auto source = telemetry::PrometheusSource::Create(prometheus.url());
  ASSERT_TRUE(source.ok());
  Timestamp now = FromUnixMicros(end * 1000000);
  auto samples = source->Fetch(now - Micros(45LL * 60 * 1000000), now, Micros(60LL * 1000000));
  ASSERT_TRUE(samples.ok()) << samples.status().ToString();
  ASSERT_FALSE(samples->empty());
  for (const auto& s : *samples) EXPECT_FALSE(s.job_id.empty()) << "series without a job are not fetched";

  telemetry::SampleStore store(Micros(2LL * 3600 * 1000000));
  store.Add(*samples);
  EXPECT_EQ(store.series(), 3u);
  telemetry::ReaperPolicy policy;
  policy.name = "idle-20";
  telemetry::Reaper reaper({policy});
  auto actions = reaper.Evaluate(now, {{"job_idle", 1, "research", "frank", {}, 2}, {"job_busy", 1, "nlp", "ada", {}, 1}},
                                 store);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].job_id, "job_idle");
  EXPECT_EQ(actions[0].gpu, 1);
  EXPECT_EQ(actions[0].kind, telemetry::ReaperAction::kWarn);

  auto unreachable = telemetry::PrometheusSource::Create("http://127.0.0.1:" + std::to_string(FreePort()));
  EXPECT_EQ(unreachable->Fetch(now - Micros(60000000), now, Micros(60000000)).status().code(), Code::kUnavailable);
}

// The server reads the estate's Prometheus by itself.
TEST(PrometheusTest, TheServerReadsTheEstatesPrometheus) {
  if (!PrometheusInstalled()) GTEST_SKIP() << "Prometheus is not installed (scripts/install-deps.sh test)";
  TempDir dir("prometheus-server");
  std::string om = "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n" +
                   Series("gpu=\"0\",causeway_job=\"job_external\"", 1, SecondsAgo(30), 40) + "# EOF\n";
  std::filesystem::create_directories(dir.path() + "/prom");
  Prometheus prometheus(dir.path() + "/prom", om);
  ASSERT_TRUE(prometheus.Ready());
  std::ifstream example(std::string(CAUSEWAY_SOURCE_DIR) + "/examples/estate.yaml");
  std::string estate((std::istreambuf_iterator<char>(example)), std::istreambuf_iterator<char>());
  estate += "\ntelemetry: {prometheus: \"" + prometheus.url() + "\", interval: 1s}\n";
  std::ofstream(dir.path() + "/estate.yaml") << estate;

  auto server = ServerProcess::Start(dir.path() + "/data", {"--estate", dir.path() + "/estate.yaml"});
  auto client = server->Client();
  auto metric = [&](const std::string& name) -> int64_t {
    auto r = client.Send("GET", "/metrics", "", Auth(server->admin_token()));
    if (!r.ok()) return -1;
    size_t at = r->body.find("\n" + name + " ");
    return at == std::string::npos ? -1 : std::stoll(r->body.substr(at + name.size() + 2));
  };
  EXPECT_TRUE(Eventually([&] { return metric("causeway_telemetry_prometheus_samples_total") > 0; },
                         std::chrono::seconds(30)))
      << "the server never read the series";
  EXPECT_EQ(metric("causeway_telemetry_prometheus_errors_total"), 0);
}

}  // namespace
}  // namespace causeway::testing
