// The real server, attacked the way the security review did it: requests
// built to crash it, smuggled requests, more connections than it has file
// descriptors, slow clients, a telemetry flood, wrong types in every body,
// control characters in names, a compression bomb, the bootstrap secret.
// Each test reproduces a finding and checks what the server must do now.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "causeway/estate.h"
#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

std::string Repeat(std::string_view s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// A raw TCP connection to the server, for what HttpClient would not send.
class Raw {
 public:
  explicit Raw(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~Raw() {
    if (fd_ >= 0) ::close(fd_);
  }
  Raw(Raw&& o) noexcept : fd_(o.fd_), ok_(o.ok_) { o.fd_ = -1; }
  bool ok() const { return ok_; }
  bool Send(std::string_view s) { return ::send(fd_, s.data(), s.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(s.size()); }
  // Everything until the server closes or `limit` passes.
  std::string ReadAll(std::chrono::milliseconds limit = std::chrono::seconds(30)) {
    std::string out;
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        closed_ = true;
        break;
      }
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }
  // What arrives first (waiting up to 30 s).
  std::string ReadSome() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 30'000) <= 0) return "";
    char buf[4096];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }
  // Whether the server closes the connection within `wait` (waits on the
  // socket, not a timer: returns as soon as it is closed).
  bool ClosedWithin(std::chrono::milliseconds wait) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(wait.count())) > 0) return Closed();
    return closed_;
  }
  // Whether the server has closed the connection (reads what is there).
  bool Closed() {
    pollfd p{fd_, POLLIN, 0};
    while (::poll(&p, 1, 0) > 0) {
      char buf[4096];
      ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (n <= 0) return closed_ = true;
    }
    return closed_;
  }

 private:
  int fd_ = -1;
  bool ok_ = false;
  bool closed_ = false;
};

std::pair<int, json> Call(ServerProcess& s, const std::string& token, const std::string& method, const std::string& path,
                          const std::string& body = "", const std::string& content_type = "") {
  auto c = s.Client();
  auto headers = Auth(token);
  if (!content_type.empty()) headers.emplace_back("Content-Type", content_type);
  auto r = c.Send(method, path, body, headers);
  if (!r.ok()) return {0, json(r.status().ToString())};
  return {r->status, json::parse(r->body, nullptr, false)};
}

bool Healthy(ServerProcess& s) {
  auto c = net::HttpClient("127.0.0.1", s.port(), std::chrono::seconds(5));
  auto r = c.Send("GET", "/healthz");
  return r.ok() && r->status == 200;
}

int64_t Metric(ServerProcess& s, const std::string& name) {
  auto c = s.Client();
  auto r = c.Send("GET", "/metrics", "", Auth(s.admin_token()));
  if (!r.ok()) return -1;
  std::istringstream in(r->body);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + " ", 0) == 0) return static_cast<int64_t>(std::stod(line.substr(name.size() + 1)));
  }
  return -1;
}

TEST(SecurityTest, NoSingleRequestCrashesTheServer) {
  TempDir dir("crash");
  auto server = ServerProcess::Start(dir.path() + "/data");
  const std::string admin = server->admin_token();
  // A JSON spec 100,000 levels deep (600 KB, under the body limit).
  std::string deep = "{\"spec\":" + Repeat("{\"a\":", 100000) + "1" + Repeat("}", 100000) + "}";
  ASSERT_LT(deep.size(), 1u << 20);
  auto r = Call(*server, admin, "POST", "/v1/jobs", deep);
  EXPECT_EQ(r.first, 400) << r.second;
  EXPECT_NE(r.second.dump().find("limit of 64"), std::string::npos) << r.second;
  // The same as YAML flow collections.
  r = Call(*server, admin, "POST", "/v1/jobs", "name: x\nlabels: " + Repeat("[", 100000) + "\n", "application/yaml");
  EXPECT_EQ(r.first, 400) << r.second;
  // SCIM: a filter with 2,500 nested parentheses, a PATCH path with 3,000.
  std::string scim = Call(*server, admin, "POST", "/v1/tokens", json{{"name", "idp"}, {"scopes", {"scim:provision"}}}.dump())
                         .second["secret"];
  r = Call(*server, scim, "GET", "/scim/v2/Users?filter=" + Repeat("%28", 2500) + "userName%20eq%20%22a%22" + Repeat("%29", 2500));
  EXPECT_EQ(r.first, 400) << r.second;
  EXPECT_EQ(r.second["scimType"], "invalidFilter") << r.second;
  auto user = Call(*server, scim, "POST", "/scim/v2/Users",
                   json{{"schemas", {"urn:ietf:params:scim:schemas:core:2.0:User"}}, {"userName", "ada@corp.example"}}.dump());
  ASSERT_EQ(user.first, 201) << user.second;
  json patch = {{"schemas", {"urn:ietf:params:scim:api:messages:2.0:PatchOp"}},
                {"Operations", {{{"op", "remove"}, {"path", "emails[" + Repeat("(", 3000) + "value eq \"a\"]"}}}}};
  r = Call(*server, scim, "PATCH", "/scim/v2/Users/" + user.second["id"].get<std::string>(), patch.dump());
  EXPECT_EQ(r.first, 400) << r.second;
  // A bearer token far longer than any real JWT.
  r = Call(*server, "eyJ" + std::string(60000, 'a') + ".e30.c2ln", "GET", "/v1/whoami");
  EXPECT_EQ(r.first, 401);
  EXPECT_TRUE(Healthy(*server));
}

TEST(SecurityTest, AWrongTypeInAnyBodyIsA400NamingTheField) {
  TempDir dir("types");
  auto server = ServerProcess::Start(dir.path() + "/data");
  const std::string admin = server->admin_token();
  std::string job = Call(*server, admin, "POST", "/v1/jobs",
                         json{{"spec", "name: x\nresources: {accelerators: H100:1}\nlabels: {owner: ada, team: nlp}\nrun: x\n"}}.dump())
                        .second["job"]["id"];
  struct Case {
    std::string method, path;
    json body;
    std::string field;
  };
  const Case cases[] = {
      {"POST", "/v1/jobs", {{"spec", 5}}, "spec"},
      {"POST", "/v1/jobs", {{"spec", "name: x"}, {"file", 7}}, "file"},
      {"POST", "/v1/jobs/" + job + "/cancel", {{"reason", {1, 2}}}, "reason"},
      {"POST", "/v1/jobs/" + job + "/checkpoints", {{"path", 1}}, "path"},
      {"POST", "/v1/jobs/" + job + "/checkpoints", {{"path", "s3://x/y"}, {"step", "ten"}}, "step"},
      {"POST", "/v1/providers/nebius/outage", {{"down", "yes"}}, "down"},
      {"POST", "/v1/tokens", {{"name", 1}}, "name"},
      {"POST", "/v1/tokens", {{"name", "x"}, {"scopes", "admin"}}, "scopes"},
      {"POST", "/v1/tokens", {{"name", "x"}, {"ttl", 5}}, "ttl"},
      {"POST", "/v1/tokens", {{"name", "x"}, {"user", json::array()}}, "user"},
      {"POST", "/v1/tokens/tok_none/reassign", {{"to", 1}}, "to"},
      {"POST", "/v1/access/bindings", {{"group", {{"a", 1}}}, {"role", "admin"}}, "group"},
      {"POST", "/v1/breakglass", {{"role", 1}, {"reason", "incident INC-1 triage"}}, "role"},
      {"POST", "/v1/breakglass", {{"role", "admin"}, {"duration", 60}}, "duration"},
      {"POST", "/v1/audit/links", {{"provider", json::object()}, {"identity", "x"}, {"person", "y"}}, "provider"},
  };
  for (const Case& c : cases) {
    auto r = Call(*server, admin, c.method, c.path, c.body.dump());
    EXPECT_EQ(r.first, 400) << c.method << " " << c.path << " " << c.body << ": " << r.second;
    EXPECT_NE(r.second.dump().find(c.field), std::string::npos) << c.path << ": " << r.second;
  }
  // Not JSON, or JSON that is not an object: 400 too.
  EXPECT_EQ(Call(*server, admin, "POST", "/v1/tokens", "[1]").first, 400);
  EXPECT_EQ(Call(*server, admin, "POST", "/v1/tokens", "{\"name\":").first, 400);
  // No request failed inside the server.
  auto metrics = server->Client().Send("GET", "/metrics", "", Auth(admin));
  EXPECT_EQ(metrics->body.find("code=\"500\""), std::string::npos) << metrics->body;
  EXPECT_TRUE(Healthy(*server));
}

TEST(SecurityTest, SmuggledRequestsBehindAnUnreadableTransferEncodingAreRefused) {
  TempDir dir("smuggle");
  auto server = ServerProcess::Start(dir.path() + "/data");
  std::string smuggled = "GET /v1/tokens HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + server->admin_token() + "\r\n\r\n";
  for (std::string te : {"xchunked", "chunked, identity", "gzip", "identity", "chunked\r\nTransfer-Encoding: chunked"}) {
    Raw c(server->port());
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(c.Send("POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: " + te +
                       "\r\n\r\n" + smuggled));
    std::string answer = c.ReadAll();
    EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << te << ": " << answer;
    EXPECT_EQ(answer.find("HTTP/1.1", 1), std::string::npos) << te << ": a second answer: " << answer;
    EXPECT_EQ(answer.find("\"tokens\""), std::string::npos) << te;
  }
  // Both Transfer-Encoding and Content-Length: refused as well.
  Raw both(server->port());
  ASSERT_TRUE(both.Send("POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" +
                        smuggled));
  std::string answer = both.ReadAll();
  EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer;
  EXPECT_EQ(answer.find("HTTP/1.1", 1), std::string::npos) << answer;
  // Plain chunked still works.
  Raw chunked(server->port());
  ASSERT_TRUE(chunked.Send("POST /v1/tokens HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer " +
                           server->admin_token() + "\r\nTransfer-Encoding: chunked\r\n\r\n"
                           "c\r\n{\"name\":\"t\",\r\n17\r\n\"scopes\":[\"jobs:read\"]}\r\n0\r\n\r\n"));
  EXPECT_EQ(chunked.ReadAll().rfind("HTTP/1.1 201", 0), 0u);
}

TEST(SecurityTest, MoreConnectionsThanDescriptorsAndSlowClientsLeaveHealthChecksAnswered) {
  TempDir dir("connections");
  // 128 open files (soft and hard), as the review ran it; short header and
  // idle limits so slow clients are cut within the test.
  auto server = ServerProcess::Start(dir.path() + "/data", {"--header-timeout", "2", "--idle-timeout", "3"}, {}, 128);
  std::vector<Raw> idle;
  for (int i = 0; i < 150; ++i) idle.emplace_back(server->port());
  EXPECT_TRUE(Eventually([&] { return Healthy(*server); }));
  int64_t cap = Metric(*server, "causeway_http_connection_cap");
  EXPECT_GT(cap, 0);
  EXPECT_LE(cap, 128 - 64);
  EXPECT_GT(Metric(*server, "causeway_http_connections_evicted_total") + Metric(*server, "causeway_http_connections_refused_total"), 0);
  // The idle ones are closed as the limits say.
  EXPECT_TRUE(Eventually([&] { return idle.back().Closed(); }));
  idle.clear();

  // Slowloris on the first request, and on the second of a kept-alive
  // connection: both cut, while /healthz keeps answering.
  auto dribble = [&](Raw& c) {
    const std::string headers = "X-Slow: " + std::string(200, 'a') + "\r\n";
    for (size_t i = 0; i < headers.size(); ++i) {
      if (!c.Send(headers.substr(i, 1)) || c.Closed()) return true;
      EXPECT_TRUE(Healthy(*server));
      if (c.ClosedWithin(std::chrono::milliseconds(100))) return true;  // a byte every 100 ms, unless cut first
    }
    return c.Closed();
  };
  Raw first(server->port());
  ASSERT_TRUE(first.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n"));
  EXPECT_TRUE(dribble(first)) << "a first request dribbled for 20 s was not cut";
  Raw second(server->port());
  ASSERT_TRUE(second.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_EQ(second.ReadSome().rfind("HTTP/1.1 200", 0), 0u);  // the first request is answered, the connection kept
  ASSERT_TRUE(second.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n"));
  EXPECT_TRUE(dribble(second)) << "a second request dribbled for 20 s was not cut";
  EXPECT_GT(Metric(*server, "causeway_http_connections_timed_out_total"), 0);
  EXPECT_TRUE(Healthy(*server));
}

// Connections that send headers promising a body and then a byte a second
// once held the cap for the whole read timeout, with no token needed: the
// body was read before authentication. Now a caller without a credential
// is refused from its headers, and at the cap the slowest body is shed, so
// /healthz and an authenticated submit still answer.
TEST(SecurityTest, SlowRequestBodiesCannotHoldEveryConnection) {
  TempDir dir("slow-bodies");
  auto server = ServerProcess::Start(dir.path() + "/data", {"--max-connections", "8"});
  const std::string slow_head = "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                "Content-Length: 100000\r\n";
  // Without a credential: refused at once, the body never waited for.
  Raw anonymous(server->port());
  ASSERT_TRUE(anonymous.Send(slow_head + "\r\n{"));
  std::string refused = anonymous.ReadSome();
  EXPECT_EQ(refused.rfind("HTTP/1.1 401", 0), 0u) << refused;
  EXPECT_TRUE(anonymous.ClosedWithin(std::chrono::seconds(5))) << "the refused connection is closed";

  // With a credential, the cap is filled by bodies sent a byte a second.
  std::vector<Raw> slow;
  for (int i = 0; i < 8; ++i) {
    slow.emplace_back(server->port());
    ASSERT_TRUE(slow.back().Send(slow_head + "Authorization: Bearer " + server->admin_token() + "\r\n\r\n{"));
  }
  auto started = std::chrono::steady_clock::now();
  for (int tick = 0; tick < 3; ++tick) {
    for (Raw& c : slow) c.Send(" ");
    EXPECT_TRUE(Healthy(*server)) << "tick " << tick;
    auto submitted = Call(*server, server->admin_token(), "POST", "/v1/jobs",
                          json{{"spec", "name: x\nresources: {accelerators: H100:1}\nlabels: {owner: ada, team: nlp}\nrun: x\n"}}.dump());
    EXPECT_EQ(submitted.first, 201) << submitted.second;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(25)) << "answered within the read timeout";
  EXPECT_GT(Metric(*server, "causeway_http_connections_evicted_total"), 0) << "slow bodies were shed to make room";
  int closed = 0;
  for (Raw& c : slow) closed += c.Closed() ? 1 : 0;
  EXPECT_GT(closed, 0);
}

// RFC 9112: a field folded onto a second line is refused (section 5.2), as
// is a second Authorization (which one counts would depend on the reader).
TEST(SecurityTest, FoldedHeadersAndASecondAuthorizationAreRefused) {
  TempDir dir("headers");
  auto server = ServerProcess::Start(dir.path() + "/data");
  const std::string admin = "Authorization: Bearer " + server->admin_token() + "\r\n";
  struct Case {
    std::string name, request;
  };
  std::vector<Case> cases = {
      {"two Authorization", "GET /v1/tokens HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer cw_wrong\r\n" + admin + "\r\n"},
      {"two Authorization, valid first", "GET /v1/tokens HTTP/1.1\r\nHost: x\r\n" + admin + "Authorization: Bearer cw_x\r\n\r\n"},
      {"folded", "GET /v1/tokens HTTP/1.1\r\nHost: x\r\n" + admin + "X-Note: one\r\n two\r\n\r\n"},
      {"folded with a tab", "GET /v1/tokens HTTP/1.1\r\nHost: x\r\nAuthorization:\r\n\tBearer " + server->admin_token() +
                                "\r\n\r\n"},
      {"two Host", "GET /v1/tokens HTTP/1.1\r\nHost: x\r\nHost: y\r\n" + admin + "\r\n"},
  };
  for (const Case& c : cases) {
    Raw raw(server->port());
    ASSERT_TRUE(raw.Send(c.request));
    std::string answer = raw.ReadAll(std::chrono::seconds(10));
    EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << c.name << ": " << answer;
    EXPECT_EQ(answer.find("\"tokens\""), std::string::npos) << c.name;
  }
  // One of each still works.
  Raw fine(server->port());
  ASSERT_TRUE(fine.Send("GET /v1/tokens HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + admin + "\r\n"));
  EXPECT_EQ(fine.ReadAll().rfind("HTTP/1.1 200", 0), 0u);
}

std::string EstateWithReaper() {
  return R"(
providers: [{name: lab, kind: sim, regions: [{name: r1, zone: eu}]}]
clusters:
  - {name: small, provider: lab, region: r1, node_pools: [{name: h100, gpu_type: H100, gpus_per_node: 8, nodes: 4}]}
prices: [{cluster: small, gpu_type: H100, on_demand: "2.00"}]
teams: [{name: nlp}]
queues: [{name: nlp, team: nlp, quotas: [{flavor: H100, nominal: 32}]}]
reaper:
  - {name: idle, threshold: 10, window: 20m, grace: 10m, max_gap: 10m}
)";
}

int64_t RssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

TEST(SecurityTest, TelemetryIsKeptOnlyForRunningAttemptsWithinItsBoundsAndMemoryStaysBounded) {
  TempDir dir("telemetry-flood");
  std::ofstream(dir.path() + "/estate.yaml") << EstateWithReaper();
  // A small point budget, so the flood reaches it; a small ASan quarantine,
  // so freed request bodies do not count as memory held.
  auto server = ServerProcess::Start(dir.path() + "/data",
                                     {"--estate", dir.path() + "/estate.yaml", "--tick-ms", "50", "--telemetry-max-points",
                                      "20000"},
                                     {{"ASAN_OPTIONS", "quarantine_size_mb=8:detect_leaks=0"}});
  const std::string admin = server->admin_token();
  std::string telemetry = Call(*server, admin, "POST", "/v1/tokens",
                               json{{"name", "exporter"}, {"scopes", {"telemetry:write"}}}.dump())
                              .second["secret"];
  std::vector<std::string> jobs;
  for (int i = 0; i < 4; ++i) {
    auto r = Call(*server, admin, "POST", "/v1/jobs",
                  json{{"spec", "name: j\nresources: {accelerators: H100:8}\nlabels: {owner: ada, team: nlp}\nrun: x\n"
                                "sim: {duration: 5h, utilization: 50}\n"}}
                      .dump());
    ASSERT_EQ(r.first, 201) << r.second;
    jobs.push_back(r.second["job"]["id"]);
  }
  for (const std::string& j : jobs) {
    ASSERT_TRUE(Eventually([&] { return Call(*server, admin, "GET", "/v1/jobs/" + j).second["state"] == "running"; }));
  }
  int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  auto line = [](const std::string& job, int gpu, int64_t ms) {
    return "DCGM_FI_DEV_GPU_UTIL{causeway_job=\"" + job + "\",causeway_attempt=\"1\",gpu=\"" + std::to_string(gpu) +
           "\"} 42 " + std::to_string(ms) + "\n";
  };
  auto push = [&](const std::string& body) { return Call(*server, telemetry, "POST", "/v1/telemetry", body, "text/plain"); };
  // No such job; a sample in the year 2100; a GPU the attempt does not have.
  auto r = push(line("job_none", 0, now_ms) + line(jobs[0], 0, 4'102'444'800'000) + line(jobs[0], 9, now_ms) +
                line(jobs[0], 1, now_ms));
  ASSERT_EQ(r.first, 202) << r.second;
  EXPECT_EQ(r.second["accepted"], 1) << r.second;
  EXPECT_EQ(r.second["rejected"]["unknown_attempt"], 1);
  EXPECT_EQ(r.second["rejected"]["outside_window"], 1);
  EXPECT_EQ(r.second["rejected"]["gpu_out_of_range"], 1);
  EXPECT_EQ(Call(*server, telemetry, "POST", "/v1/jobs/job_none/telemetry", line("x", 0, now_ms), "text/plain").first, 404);
  // More jobs in one push than a node could hold: refused whole.
  std::string many;
  for (int i = 0; i < 300; ++i) many += line("job_" + std::to_string(i), 0, now_ms);
  EXPECT_EQ(push(many).first, 400);

  // The flood: 100 pushes of about 1 MiB, every sample distinct.
  int64_t before = RssKb(server->pid());
  std::mt19937 rng(7);
  int full = 0;
  for (int p = 0; p < 100; ++p) {
    std::string body;
    while (body.size() < (1u << 20) - 200) {
      body += line(jobs[rng() % jobs.size()], static_cast<int>(rng() % 8), now_ms - static_cast<int64_t>(rng() % 3'000'000));
    }
    auto answer = push(body);
    ASSERT_TRUE(answer.first == 202 || answer.first == 429) << answer.first << " " << answer.second;
    full += answer.first == 429;
  }
  int64_t after = RssKb(server->pid());
  EXPECT_GT(full, 0) << "the point budget was never reached";
  EXPECT_LE(Metric(*server, "causeway_telemetry_points"), 20000);
  // 20,000 points are under 1 MB; the rest is the request path's own
  // memory. Before the bound, the same flood grew RSS by about 200 MB.
  EXPECT_LT(after - before, 64 * 1024) << "RSS grew from " << before << " kB to " << after << " kB";
  EXPECT_TRUE(Healthy(*server));
}

TEST(SecurityTest, HostileNamesDurationsAndArchivesAreRefused) {
  TempDir dir("hygiene");
  auto server = ServerProcess::Start(dir.path() + "/data");
  const std::string admin = server->admin_token();
  // The bootstrap secret is in the token file, not on standard output.
  EXPECT_EQ(server->banner().find(admin), std::string::npos) << server->banner();
  EXPECT_NE(server->banner().find("admin.token"), std::string::npos) << server->banner();
  // Invalid UTF-8 in a YAML spec: 400 with the position.
  auto r = Call(*server, admin, "POST", "/v1/jobs", "name: caf\xe9\nrun: x\n", "application/yaml");
  EXPECT_EQ(r.first, 400) << r.second;
  EXPECT_EQ(r.second["error"]["details"]["diagnostics"][0]["line"], 1) << r.second;
  // A NUL in a userName, a group name, a label.
  std::string scim = Call(*server, admin, "POST", "/v1/tokens", json{{"name", "idp"}, {"scopes", {"scim:provision"}}}.dump())
                         .second["secret"];
  r = Call(*server, scim, "POST", "/scim/v2/Users",
           json{{"schemas", {"urn:ietf:params:scim:schemas:core:2.0:User"}}, {"userName", std::string("bob@example.com\0evil", 20)}}
               .dump());
  EXPECT_EQ(r.first, 400) << r.second;
  r = Call(*server, admin, "POST", "/v1/access/bindings", json{{"group", "ops\nadmin"}, {"role", "admin"}}.dump());
  EXPECT_EQ(r.first, 400) << r.second;
  r = Call(*server, admin, "POST", "/v1/jobs",
           json{{"spec", "name: x\nresources: {accelerators: H100:1}\nlabels: {owner: \"ada\\u0000\", team: nlp}\nrun: x\n"}}.dump());
  EXPECT_EQ(r.first, 400) << r.second;
  // A lifetime that would overflow.
  r = Call(*server, admin, "POST", "/v1/tokens", json{{"name", "forever"}, {"ttl", "106751991d"}}.dump());
  EXPECT_EQ(r.first, 400) << r.second;
  // A gzip bomb: 64 MB of spaces in about 64 KB.
  std::string bomb;
  {
    z_stream z{};
    ASSERT_EQ(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
    std::string chunk(1 << 20, ' ');
    char out[1 << 16];
    for (int i = 0; i < 64; ++i) {
      z.next_in = reinterpret_cast<Bytef*>(chunk.data());
      z.avail_in = static_cast<uInt>(chunk.size());
      int flush = i == 63 ? Z_FINISH : Z_NO_FLUSH;
      do {
        z.next_out = reinterpret_cast<Bytef*>(out);
        z.avail_out = sizeof out;
        deflate(&z, flush);
        bomb.append(out, sizeof out - z.avail_out);
      } while (z.avail_out == 0);
    }
    deflateEnd(&z);
  }
  ASSERT_LT(bomb.size(), 1u << 20);
  r = Call(*server, admin, "POST", "/v1/audit/imports?source=k8s&provider=x", bomb, "application/gzip");
  EXPECT_EQ(r.first, 400) << r.second;
  EXPECT_NE(r.second.dump().find("compressed size"), std::string::npos) << r.second;
  // The error names the upload, never a path on the server.
  EXPECT_NE(r.second.dump().find("api-upload"), std::string::npos) << r.second;
  EXPECT_EQ(r.second.dump().find("/tmp"), std::string::npos) << r.second;
  EXPECT_EQ(r.second.dump().find(dir.path()), std::string::npos) << r.second;
  EXPECT_TRUE(Healthy(*server));
}

}  // namespace
}  // namespace causeway::testing
