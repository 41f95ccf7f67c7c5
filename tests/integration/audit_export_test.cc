// Exporting the trail to a SIEM against real receivers (tests/peers/siem.mjs
// on Node's http, net and tls): an HTTP collector that refuses, drops and
// goes away, a syslog receiver over TCP and TLS, and rotated files. Nothing
// is lost; a batch repeats only when its delivery was in doubt.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "node_peer.h"
#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

std::vector<std::string> Lines(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

// The metadata.uid of each OCSF event in the files, in order.
std::vector<std::string> Uids(const std::vector<std::string>& files) {
  std::vector<std::string> out;
  for (const std::string& f : files) {
    for (const std::string& line : Lines(f)) {
      json ev = json::parse(line, nullptr, false);
      EXPECT_TRUE(ev.is_object() && ev.contains("class_uid")) << line;
      if (ev.is_object()) out.push_back(ev["metadata"]["uid"]);
    }
  }
  return out;
}

std::string Port(const std::string& url) { return url.substr(url.rfind(':') + 1); }

class AuditExport : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = PeersMissing(); why.rfind("Node.js", 0) == 0) GTEST_SKIP() << why;
    dir_.emplace("audit-export");
    // No scheduling cycles: the trail holds exactly what the test makes.
    server_ = ServerProcess::Start(dir_->path(), {"--tick-ms", "3600000", "--audit-checkpoint-interval", "0"});
    env_ = {{"CAUSEWAY_SERVER", server_->url()}, {"CAUSEWAY_TOKEN", server_->admin_token()}};
    Submit(3);
    auto k8s = RunCli({"audit", "import", std::string(CAUSEWAY_SOURCE_DIR) + "/examples/audit/k8s-audit.jsonl",
                       "--source", "k8s", "--provider", "coreweave"}, env_);
    ASSERT_EQ(k8s.exit_code, 0) << k8s.err;
  }
  void Submit(int n) {
    auto client = server_->Client();
    for (int i = 0; i < n; ++i) {
      auto r = client.Send("POST", "/v1/jobs", json{{"spec", "name: e" + std::to_string(submitted_++) +
                                                        "\nresources: {accelerators: L4:1, labels: {owner: o, team: research}}\n"}}.dump(),
                           Auth(server_->admin_token()));
      ASSERT_EQ(r->status, 201) << r->body;
    }
  }
  // Every event of the trail, as export names them.
  std::set<std::string> Expected() {
    auto r = RunCli({"--json", "audit", "search", "--limit", "1000"}, env_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json page = json::parse(r.out);
    std::set<std::string> out;
    for (const json& ev : page["events"]) out.insert(ev["metadata"]["uid"]);
    return out;
  }
  CliResult Export(const std::string& to, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--json", "audit", "export", "--to", to, "--cursor", dir_->path() + "/cursor.json",
                                     "--batch", "3", "--retry-min-ms", "10"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunCli(args, env_);
  }
  std::string Cursor() {
    std::ifstream in(dir_->path() + "/cursor.json");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::optional<TempDir> dir_;
  std::unique_ptr<ServerProcess> server_;
  std::map<std::string, std::string> env_;
  int submitted_ = 0;
};

TEST_F(AuditExport, HttpCollectorRefusingDroppingAndGoneLosesNothing) {
  std::string received = dir_->path() + "/siem-1.jsonl";
  std::string url;
  {
    // Two refusals (503) and one answer cut off after the events were kept.
    NodePeer siem("siem.mjs", {"http", received, "--fail-first", "2", "--drop-first", "1"});
    ASSERT_EQ(siem.first_line().rfind("url ", 0), 0u) << siem.first_line();
    url = siem.first_line().substr(4);
    auto r = Export(url + "/ingest");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    json stats = json::parse(r.out);
    EXPECT_EQ(stats["retries"], 3);
    EXPECT_EQ(stats["imported_events"], 4);
  }
  std::set<std::string> expected = Expected();
  std::vector<std::string> first = Uids({received});
  EXPECT_EQ(std::set<std::string>(first.begin(), first.end()), expected);
  // Only the batch whose answer was cut off arrived twice.
  EXPECT_LE(first.size(), expected.size() + 3);
  EXPECT_GT(first.size(), expected.size());

  // The collector is gone: the run gives up, the cursor stays.
  Submit(2);
  std::string cursor = Cursor();
  auto down = Export(url + "/ingest", {"--max-attempts", "2"});
  EXPECT_EQ(down.exit_code, 7) << down.out << down.err;
  EXPECT_NE(down.err.find("the next run sends from there"), std::string::npos) << down.err;
  EXPECT_EQ(Cursor(), cursor);
  // Back on the same port: exactly what it missed.
  std::string received2 = dir_->path() + "/siem-2.jsonl";
  NodePeer back("siem.mjs", {"http", received2, "--port", Port(url)});
  ASSERT_EQ(back.first_line(), "url " + url);
  auto r = Export(url + "/ingest");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<std::string> second = Uids({received2});
  EXPECT_EQ(second.size(), 2u) << json(second);  // the two job.submit events
  std::set<std::string> all(first.begin(), first.end());
  all.insert(second.begin(), second.end());
  EXPECT_EQ(all, Expected());
  for (const std::string& uid : second) EXPECT_EQ(std::count(first.begin(), first.end(), uid), 0) << uid;
  // Nothing new: nothing sent.
  EXPECT_EQ(json::parse(Export(url + "/ingest").out)["batches"], 0);
}

TEST_F(AuditExport, SyslogOverTcpAndTlsAsRfc5424) {
  std::string received = dir_->path() + "/syslog.jsonl";
  std::string url;
  {
    NodePeer syslog("siem.mjs", {"syslog", received});
    url = syslog.first_line().substr(4);
    ASSERT_EQ(url.rfind("tcp://", 0), 0u) << syslog.first_line();
    auto r = Export(url);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  // Each batch was confirmed by the receiver closing after reading it.
  std::vector<std::string> uids = Uids({received});
  EXPECT_EQ(uids.size(), Expected().size());
  EXPECT_EQ(std::set<std::string>(uids.begin(), uids.end()), Expected());
  for (const std::string& header : Lines(received + ".headers")) {
    // PRI 110 = facility 13 (log audit) * 8 + 6 (informational); app causeway; MSGID ocsf-<class>.
    EXPECT_EQ(header.rfind("MALFORMED", 0), std::string::npos) << header;
    EXPECT_NE(header.find(" causeway - ocsf-"), std::string::npos) << header;
  }
  EXPECT_EQ(Lines(received + ".headers")[0].substr(0, 4), "110 ");
  // The receiver is down: nothing is confirmed, the cursor stays; back up,
  // it gets what it missed and nothing twice.
  Submit(2);
  std::string cursor = Cursor();
  EXPECT_EQ(Export(url, {"--max-attempts", "2"}).exit_code, 7);
  EXPECT_EQ(Cursor(), cursor);
  std::string again = dir_->path() + "/syslog-2.jsonl";
  {
    NodePeer back("siem.mjs", {"syslog", again, "--port", Port(url)});
    ASSERT_EQ(back.first_line(), "url " + url);
    auto r = Export(url);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  std::vector<std::string> missed = Uids({again});
  EXPECT_EQ(missed.size(), 2u);
  uids.insert(uids.end(), missed.begin(), missed.end());
  EXPECT_EQ(std::set<std::string>(uids.begin(), uids.end()), Expected());
  EXPECT_EQ(uids.size(), Expected().size());

  // TLS: a certificate for localhost from a CA of the test's own.
  if (std::system("openssl version > /dev/null 2>&1") != 0) GTEST_SKIP() << "the openssl command is not installed";
  std::string cert = dir_->path() + "/cert.pem", key = dir_->path() + "/key.pem";
  std::string make = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout " + key + " -out " +
                     cert + " -days 1 -subj /CN=localhost -addext subjectAltName=DNS:localhost > /dev/null 2>&1";
  ASSERT_EQ(std::system(make.c_str()), 0);
  std::string tls_received = dir_->path() + "/syslog-tls.jsonl";
  NodePeer tls("siem.mjs", {"syslog", tls_received, "--tls", cert, key});
  url = tls.first_line().substr(4);
  ASSERT_EQ(url.rfind("tls://localhost:", 0), 0u) << tls.first_line();
  std::filesystem::remove(dir_->path() + "/cursor.json");
  // A certificate nobody vouches for is refused.
  auto untrusted = Export(url, {"--max-attempts", "1"});
  EXPECT_EQ(untrusted.exit_code, 7) << untrusted.out << untrusted.err;
  EXPECT_NE(untrusted.err.find("TLS"), std::string::npos) << untrusted.err;
  auto r = Export(url, {"--ca", cert});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<std::string> over_tls = Uids({tls_received});
  EXPECT_EQ(std::set<std::string>(over_tls.begin(), over_tls.end()), Expected());
}

TEST_F(AuditExport, FilesRotateBySizeAndHoldEveryEventOnce) {
  std::string path = dir_->path() + "/export/audit.jsonl";
  std::filesystem::create_directories(dir_->path() + "/export");
  auto r = Export("file:" + path, {"--rotate-bytes", "4000", "--keep", "100"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<std::string> files;
  for (int i = 100; i >= 1; --i) {
    std::string rotated = path + "." + std::to_string(i);
    if (std::filesystem::exists(rotated)) files.push_back(rotated);
  }
  files.push_back(path);
  EXPECT_GE(files.size(), 3u);
  std::vector<std::string> uids = Uids(files);  // oldest file first
  EXPECT_EQ(uids.size(), Expected().size());
  EXPECT_EQ(std::set<std::string>(uids.begin(), uids.end()), Expected());
  auto bad = RunCli({"audit", "export", "--to", "ftp://x", "--cursor", dir_->path() + "/c2.json"}, env_);
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(bad.err.find("expected http(s)://"), std::string::npos) << bad.err;
  std::ofstream(dir_->path() + "/c3.json") << "garbage";
  auto garbled = RunCli({"audit", "export", "--to", "file:" + path, "--cursor", dir_->path() + "/c3.json"}, env_);
  EXPECT_EQ(garbled.exit_code, 3);
  EXPECT_NE(garbled.err.find("not an export cursor"), std::string::npos) << garbled.err;
}

// Export reads the trail through the API: a token without audit:read
// exports nothing and moves no cursor; the feed itself pages by position.
TEST_F(AuditExport, ExportReadsTheTrailThroughTheApiWithAuditRead) {
  auto client = server_->Client();
  auto made = client.Send("POST", "/v1/tokens", json{{"name", "jobs"}, {"scopes", {"jobs:read"}}}.dump(),
                          Auth(server_->admin_token()));
  ASSERT_EQ(made->status, 201) << made->body;
  std::string cursor = dir_->path() + "/denied.json";
  auto denied = RunCli({"audit", "export", "--to", "file:" + dir_->path() + "/denied.jsonl", "--cursor", cursor},
                       {{"CAUSEWAY_SERVER", server_->url()}, {"CAUSEWAY_TOKEN", json::parse(made->body)["secret"]}});
  EXPECT_EQ(denied.exit_code, 5) << denied.err;
  EXPECT_NE(denied.err.find("audit:read"), std::string::npos) << denied.err;
  EXPECT_FALSE(std::filesystem::exists(cursor));

  auto first = client.Send("GET", "/v1/audit/feed?source=own&after=0&limit=2", "", Auth(server_->admin_token()));
  ASSERT_EQ(first->status, 200) << first->body;
  EXPECT_EQ(first->headers["content-type"], "application/x-ndjson");
  EXPECT_EQ(first->headers["x-causeway-last"], "2");
  EXPECT_EQ(std::count(first->body.begin(), first->body.end(), '\n'), 2);
  EXPECT_EQ(json::parse(first->body.substr(0, first->body.find('\n')))["metadata"]["product"]["name"], "Causeway");
  auto imported = client.Send("GET", "/v1/audit/feed?source=imported&after=0", "", Auth(server_->admin_token()));
  ASSERT_EQ(imported->status, 200) << imported->body;
  EXPECT_EQ(std::count(imported->body.begin(), imported->body.end(), '\n'), 4) << "the k8s log's four events";
  auto past = client.Send("GET", "/v1/audit/feed?source=imported&after=1000000", "", Auth(server_->admin_token()));
  ASSERT_EQ(past->status, 200);
  EXPECT_TRUE(past->body.empty());
  EXPECT_EQ(past->headers["x-causeway-last"], "1000000");
  auto bad = client.Send("GET", "/v1/audit/feed?source=everything", "", Auth(server_->admin_token()));
  EXPECT_EQ(bad->status, 400);
}

}  // namespace
}  // namespace causeway::testing
