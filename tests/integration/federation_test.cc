// Federated cloud identities: a job on the local executor reaches AWS the
// way the official SDK does on its own (boto3 reading AWS_ROLE_ARN and
// AWS_WEB_IDENTITY_TOKEN_FILE, calling STS AssumeRoleWithWebIdentity), with
// no access key anywhere in its environment. STS and S3 are moto's server
// (a real implementation of both APIs, from PyPI). moto does not check the
// token's signature, so the test checks the same token against Causeway's
// JWKS with jose (npm), as AWS's STS would. Google's and Microsoft's own
// libraries (google-auth, azure-identity) read the GCP and Azure files as
// far as their first network call, to a local token endpoint.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "cached_peer.h"
#include "causeway/subprocess.h"
#include "node_peer.h"
#include "s3_peer.h"
#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

// The Python with the official SDKs, pinned (tests/peers/cloud-sdks).
std::string SdkPython() { return CachedPeer("CAUSEWAY_CLOUD_SDKS_VENV", "cloud-sdks-1") + "/bin/python"; }

// Why the SDKs cannot run here, or "".
std::string SdksMissing() {
  auto r = RunProcess({SdkPython(), "-c", "import boto3, google.auth, azure.identity"}, {}, "", std::chrono::seconds(60));
  if (r.ok() && r->exit_code == 0) return "";
  return "the cloud SDKs are not installed at " + SdkPython() +
         " (scripts/install-deps.sh test installs tests/peers/cloud-sdks from PyPI)";
}

// What a job of team nlp printed last when it ran `program` (Python, with
// the SDKs; written into `dir` and given `args`) with `envs` and the spec's
// `more` lines: the JSON object beginning with `first_key`, and the whole
// log. `during` runs once the job is submitted, before it is waited for.
struct Said {
  std::string job;
  json said;
  std::string log;
};
Said RunProgram(EstateServer& s, const TempDir& dir, const std::string& program, const std::string& envs,
                const std::string& args, const std::string& first_key, const std::string& more = "",
                const std::function<void(const std::string& job)>& during = nullptr) {
  std::ofstream(dir.path() + "/program.py") << program;
  Said out;
  out.job = s.Submit("resources: {accelerators: H200:1}\nlabels: {team: nlp, owner: alice@corp.example}\n"
                     "envs: {" + envs + "}\n" + more + "run: " + SdkPython() + " " + dir.path() + "/program.py " + args + "\n");
  if (during) during(out.job);
  EXPECT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + out.job)["state"] == "succeeded"; }, std::chrono::seconds(120)))
      << s.Get("/v1/jobs/" + out.job).dump(2);
  auto logs = RunCli({"logs", out.job}, {{"CAUSEWAY_SERVER", s.process().url()}, {"CAUSEWAY_TOKEN", s.process().admin_token()}});
  out.log = logs.out;
  const size_t at = logs.out.rfind("{\"" + first_key + "\"");
  out.said = at == std::string::npos ? json() : json::parse(logs.out.substr(at), nullptr, false);
  EXPECT_TRUE(out.said.is_object()) << logs.out << logs.err;
  return out;
}

// One local cluster writing to `out`, teams nlp and vision, and the start
// of an identity section for the test to go on with.
std::string LaptopEstate(const std::string& out) {
  return "providers: [{name: here, kind: local, regions: [{name: r1, zone: eu}]}]\n"
         "clusters:\n  - name: laptop\n    provider: here\n    region: r1\n"
         "    node_pools: [{name: h200, gpu_type: H200, gpus_per_node: 2, nodes: 1}]\n"
         "    local: {output_dir: " + out + "}\n"
         "teams: [{name: nlp}, {name: vision}]\n"
         "identity:\n";
}

// The body of the 400 that submitting a one-GPU job with `lines` gets.
std::string Refusal(EstateServer& s, const std::string& lines) {
  auto c = s.process().Client();
  auto r = c.Send("POST", "/v1/jobs",
                  json{{"spec", "resources: {accelerators: H200:1}\n" + lines + "run: \"true\"\n"}}.dump(),
                  Auth(s.process().admin_token()));
  if (!r.ok()) return r.status().ToString();
  EXPECT_EQ(r->status, 400) << r->body;
  return r->body;
}

TEST(FederationTest, AJobReachesAwsThroughStsWithItsWorkloadTokenAndNoStaticKey) {
  if (std::string why = S3PeersMissing(); !why.empty()) GTEST_SKIP() << "AWS peers unavailable: " << why;
  if (std::string why = PeersMissing(); !why.empty()) GTEST_SKIP() << "identity peers unavailable: " << why;
  if (std::string why = SdksMissing(); !why.empty()) GTEST_SKIP() << why;
  S3Peer aws;
  ASSERT_TRUE(aws.ready());
  TempDir dir("federation");
  // The test's own object, put with the test's own (static) keys.
  const std::string rclone = dir.path() + "/rclone.conf";
  std::ofstream(rclone) << RcloneRemote("aws", aws);
  std::ofstream(dir.path() + "/data.txt") << "tokens, not keys";
  Rclone(rclone, {"mkdir", "aws:training"});
  Rclone(rclone, {"copyto", dir.path() + "/data.txt", "aws:training/data.txt"});

  const std::string out = dir.path() + "/out";
  EstateServer s(dir, LaptopEstate(out) +
                 "  workload: {audiences: [sts.amazonaws.com], lifetime: 16s}\n"
                 "  federations:\n"
                 "    - {name: aws-training, kind: aws, role_arn: \"arn:aws:iam::123456789012:role/training\", "
                 "sts_endpoint: \"" + aws.endpoint() + "\", teams: [nlp], default: true}\n");

  // What the job tells: who STS says it is, the object, which static keys
  // it holds (none), its token file (a digest before and after a refresh,
  // which it waits for: never the token), and a copy of the token for the
  // test to verify.
  const std::string program =
      "import boto3, hashlib, json, os, sys, time\n"
      "f = os.environ['AWS_WEB_IDENTITY_TOKEN_FILE']\n"
      "digest = lambda: hashlib.sha256(open(f, 'rb').read()).hexdigest()\n"
      "before = digest()\n"
      "open('token-copy.jwt', 'w').write(open(f).read())\n"
      "who = boto3.client('sts').get_caller_identity()['Arn']\n"
      "s3 = boto3.client('s3', endpoint_url=sys.argv[1])\n"
      "body = s3.get_object(Bucket='training', Key='data.txt')['Body'].read().decode()\n"
      "deadline = time.time() + 60\n"
      "while digest() == before and time.time() < deadline:\n"
      "    time.sleep(0.1)\n"
      "print(json.dumps({'arn': who, 'body': body, 'file': f, 'mode': oct(os.stat(f).st_mode & 0o777),\n"
      "  'static': sorted(k for k in os.environ if k in ('AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', "
      "'AWS_SESSION_TOKEN', 'CAUSEWAY_FEDERATED_TOKEN_AWS')),\n"
      "  'refreshed': digest() != before}))\n";
  Said run = RunProgram(s, dir, program, "AWS_DEFAULT_REGION: us-east-1", aws.endpoint(), "arn");
  const std::string& job = run.job;
  const json& said = run.said;
  ASSERT_TRUE(said.is_object());
  EXPECT_EQ(said["arn"], "arn:aws:sts::123456789012:assumed-role/training/causeway-" + job + "-1");
  EXPECT_EQ(said["body"], "tokens, not keys");
  EXPECT_EQ(said["static"], json::array()) << "no static key, and the token only in its file";
  EXPECT_EQ(said["mode"], "0o600");
  EXPECT_TRUE(said["refreshed"]) << "the token is refreshed at half its lifetime";
  // The folder with the token is gone with the attempt.
  EXPECT_FALSE(std::filesystem::exists(said["file"].get<std::string>()));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(said["file"].get<std::string>()).parent_path()));

  // The token STS was given, checked as AWS would: Causeway's JWKS, the
  // audience sts.amazonaws.com, the job as its subject.
  std::ifstream copy(out + "/token-copy.jwt");
  std::string token((std::istreambuf_iterator<char>(copy)), {});
  auto r = RunProcess({"node", PeersDir() + "/verify.mjs", s.process().url(), "sts.amazonaws.com", token}, {}, "",
                      std::chrono::seconds(60));
  ASSERT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? r->err : r.status().ToString());
  json verdict = json::parse(r->out, nullptr, false);
  ASSERT_TRUE(verdict.value("ok", false)) << verdict.dump();
  EXPECT_EQ(verdict["payload"]["sub"], "job:" + job);
  EXPECT_EQ(verdict["payload"]["aud"], "sts.amazonaws.com");
  EXPECT_EQ(run.log.find(token), std::string::npos) << "the token in the job's log";

  // The launch names the token by its id, never the token.
  json audit = s.Get("/v1/audit?resource=job/" + job);
  bool named = false;
  for (const json& e : audit["events"]) {
    if (e["action"] == "job.launch") named = e["details"]["federated_tokens"]["aws-training"]["jti"] == verdict["payload"]["jti"];
  }
  EXPECT_TRUE(named) << audit.dump(2);
  EXPECT_EQ(audit.dump().find(token.substr(token.rfind('.') + 1)), std::string::npos);

  // Readiness's workload identity control counts the jobs that ran federated.
  json readiness = s.Get("/v1/readiness?provider=here");
  json control;
  for (const json& f : readiness["findings"]) {
    if (f["control"] == "workload-identity") control = f;
  }
  EXPECT_NE(control.dump().find("1 of 1 jobs that ran here reached clouds with federated identities"), std::string::npos)
      << readiness.dump(2);

  // A team the identity is not for is refused at submission.
  const std::string refused = Refusal(s, "labels: {team: vision}\nidentities: [aws-training]\n");
  EXPECT_NE(refused.find("identity \\\"aws-training\\\" is not allowed to team \\\"vision\\\""), std::string::npos)
      << refused;
  // Nor does a job of that team hold a token STS would take for the role:
  // the only audience is the federation's, which is nlp's alone.
  const std::string vision = s.Submit("resources: {accelerators: H200:1}\nlabels: {team: vision}\n"
                                      "run: 'echo \"workload token: [${CAUSEWAY_WORKLOAD_TOKEN:-none}]\"'\n");
  EXPECT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + vision)["state"] == "succeeded"; }, std::chrono::seconds(60)))
      << s.Get("/v1/jobs/" + vision).dump(2);
  auto logs = RunCli({"logs", vision}, {{"CAUSEWAY_SERVER", s.process().url()}, {"CAUSEWAY_TOKEN", s.process().admin_token()}});
  EXPECT_NE(logs.out.find("workload token: [none]"), std::string::npos) << logs.out << logs.err;
}

// The secret broker: a job's `secrets:` references are read from Secrets
// Manager (moto's) with the attempt's own federated identity, delivered in
// its environment and as a file, each read audited with a keyed digest;
// boto3 in the job reads the same secret through STS by itself; while the
// attempt runs `credentials --job` lists its federated token and its
// deliveries, and after it ends nothing lists them. No file the server
// wrote (database, its log, the job's output) holds a value or a static
// key, and a reference the team may not read is refused at submission.
TEST(FederationTest, TheBrokerReadsAJobsSecretsWithItsOwnIdentityAndKeepsNoValue) {
  if (std::string why = S3PeersMissing(); !why.empty()) GTEST_SKIP() << "AWS peers unavailable: " << why;
  if (std::string why = SdksMissing(); !why.empty()) GTEST_SKIP() << why;
  S3Peer aws;
  ASSERT_TRUE(aws.ready());
  TempDir dir("secrets-broker");
  const std::string password = "pw-7f3a9c-never-stored", tls = "-----BEGIN TLS 8d2e-----";
  // The company's secrets, put with the test's own (static) keys.
  std::ofstream(dir.path() + "/put.py")
      << "import boto3, json, sys\n"
         "sm = boto3.client('secretsmanager', endpoint_url=sys.argv[1], region_name='us-east-1',\n"
         "  aws_access_key_id='test', aws_secret_access_key='test')\n"
         "sm.create_secret(Name='prod/nlp/db', SecretString=json.dumps({'username': 'app', 'password': sys.argv[2]}))\n"
         "sm.create_secret(Name='prod/nlp/tls', SecretString=sys.argv[3])\n";
  auto put = RunProcess({SdkPython(), dir.path() + "/put.py", aws.endpoint(), password, tls}, {}, "", std::chrono::seconds(60));
  ASSERT_TRUE(put.ok() && put->exit_code == 0) << (put.ok() ? put->err : put.status().ToString());

  const std::string out = dir.path() + "/out";
  EstateServer s(dir, LaptopEstate(out) +
                 "  workload: {audiences: [sts.amazonaws.com]}\n"
                 "  federations:\n"
                 "    - {name: aws-training, kind: aws, role_arn: \"arn:aws:iam::123456789012:role/training\", "
                 "sts_endpoint: \"" + aws.endpoint() + "\", teams: [nlp, vision], default: true}\n"
                 "  secret_stores:\n"
                 "    - {name: company-sm, identity: aws-training, region: us-east-1, endpoint: \"" + aws.endpoint() +
                     "\", teams: {nlp: [\"prod/nlp/*\"], vision: [shared/hf-token]}}\n");
  // The job tells digests of what it got, never the values; then waits
  // until the test has looked at it running.
  const std::string program =
      "import boto3, hashlib, json, os, sys, time\n"
      "h = lambda s: hashlib.sha256(s.encode()).hexdigest()\n"
      "sm = boto3.client('secretsmanager', endpoint_url=sys.argv[1])\n"
      "own = json.loads(sm.get_secret_value(SecretId='prod/nlp/db')['SecretString'])['password']\n"
      "open('running', 'w').close()\n"
      "deadline = time.time() + 60\n"
      "while not os.path.exists('go') and time.time() < deadline:\n"
      "    time.sleep(0.05)\n"
      "print(json.dumps({'db': h(os.environ['DB_PASSWORD']), 'own': h(own), 'tls_file': os.environ['TLS_CERT'],\n"
      "  'tls': h(open(os.environ['TLS_CERT']).read()), 'mode': oct(os.stat(os.environ['TLS_CERT']).st_mode & 0o777),\n"
      "  'static': sorted(k for k in os.environ if k in ('AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'))}))\n";
  auto sha = [](const std::string& v) {
    auto r = RunProcess({"sha256sum"}, {}, v, std::chrono::seconds(10));
    return r.ok() ? r->out.substr(0, 64) : std::string();
  };
  json running_creds;
  Said run = RunProgram(
      s, dir, program, "AWS_DEFAULT_REGION: us-east-1", aws.endpoint(), "db",
      "secrets:\n  DB_PASSWORD: \"aws-sm://prod/nlp/db#password\"\n  TLS_CERT: {from: aws-sm://prod/nlp/tls, as: file}\n",
      [&](const std::string& job) {
        EXPECT_TRUE(Eventually([&] { return std::filesystem::exists(out + "/running"); }, std::chrono::seconds(120)))
            << s.Get("/v1/jobs/" + job).dump(2);
        running_creds = s.Get("/v1/jobs/" + job + "/credentials");
        std::ofstream(out + "/go").close();
      });
  const json& said = run.said;
  ASSERT_TRUE(said.is_object());
  EXPECT_EQ(said["db"], sha(password)) << "the broker's value, in the environment";
  EXPECT_EQ(said["own"], sha(password)) << "boto3's own read through STS";
  EXPECT_EQ(said["tls"], sha(tls)) << "the broker's value, as a file";
  EXPECT_EQ(said["mode"], "0o600");
  EXPECT_EQ(said["static"], json::array());
  EXPECT_FALSE(std::filesystem::exists(said["tls_file"].get<std::string>())) << "removed with the attempt";

  // While it ran: its federated token and both deliveries, each ending with the attempt.
  ASSERT_TRUE(running_creds.contains("secret_deliveries")) << running_creds.dump(2);
  std::set<std::string> delivered;
  for (const json& d : running_creds["secret_deliveries"]) {
    delivered.insert(d["delivery"].get<std::string>() + " " + d["variable"].get<std::string>() + " " + d["reference"].get<std::string>());
    EXPECT_EQ(d["store"], "company-sm");
    EXPECT_EQ(d["ends"], "with the attempt");
  }
  EXPECT_EQ(delivered, (std::set<std::string>{"env DB_PASSWORD aws-sm://prod/nlp/db#password",
                                              "file TLS_CERT aws-sm://prod/nlp/tls"}))
      << running_creds.dump(2);
  bool federated = false;
  for (const json& t : running_creds["workload_tokens"]) federated |= t.value("identity", "") == "aws-training";
  EXPECT_TRUE(federated) << running_creds.dump(2);
  EXPECT_EQ(s.Get("/v1/jobs/" + run.job + "/credentials")["secret_deliveries"], json::array()) << "ended with the attempt";

  // Each read audited: store, reference, outcome, a keyed digest (not the value's SHA-256).
  json audit = s.Get("/v1/audit?resource=job/" + run.job);
  int reads = 0;
  for (const json& e : audit["events"]) {
    if (e["action"] != "secret.read") continue;
    ++reads;
    EXPECT_EQ(e["details"]["store"], "company-sm");
    EXPECT_TRUE(e["details"]["ok"].get<bool>());
    EXPECT_EQ(e["details"]["digest"].get<std::string>().rfind("hmac-sha256:", 0), 0u);
    EXPECT_EQ(e["details"]["digest"].get<std::string>().find(sha(password)), std::string::npos);
  }
  EXPECT_EQ(reads, 2) << audit.dump(2);

  // Nothing the server wrote holds a value or the test's static key id.
  json provenance = s.Get("/v1/jobs/" + run.job + "/provenance");
  for (const std::string& v : {password, tls}) {
    EXPECT_EQ(audit.dump().find(v), std::string::npos);
    EXPECT_EQ(provenance.dump().find(v), std::string::npos);
    EXPECT_EQ(run.log.find(v), std::string::npos);
  }
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir.path())) {
    if (!f.is_regular_file()) continue;
    std::ifstream in(f.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    for (const std::string& v : {password, tls}) {
      EXPECT_EQ(bytes.find(v), std::string::npos) << f.path() << " holds a secret value";
    }
  }

  // A reference the team may not read is refused at submission, with the field.
  const std::string refused = Refusal(s, "labels: {team: vision}\nsecrets: {DB: \"aws-sm://prod/nlp/db#password\"}\n");
  EXPECT_NE(refused.find("secrets.DB: team \\\"vision\\\" may not read aws-sm://prod/nlp/db#password"), std::string::npos)
      << refused;
}

// google-auth's external_account credentials and azure-identity's
// WorkloadIdentityCredential, built from what the workspace script wrote
// and nothing else, each send the attempt's token to their token endpoint
// (local: plain HTTP for Google's STS, which its library allows; HTTPS
// with a test CA for Entra ID, which its library insists on).
TEST(FederationTest, GoogleAuthAndAzureIdentityReadTheFilesAsTheirOwn) {
  if (std::string why = SdksMissing(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir("federation-sdks");
  auto cert = RunProcess({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                          "-keyout", dir.path() + "/key.pem", "-out", dir.path() + "/cert.pem", "-days", "1", "-subj",
                          "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"},
                         {}, "", std::chrono::seconds(60));
  ASSERT_TRUE(cert.ok() && cert->exit_code == 0) << (cert.ok() ? cert->err : cert.status().ToString());
  const uint16_t google = FreePort(), entra = FreePort();
  const std::string pool = "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/ml/providers/cw";
  EstateServer s(dir,
                 "providers: [{name: here, kind: local, regions: [{name: r1, zone: eu}]}]\n"
                 "clusters:\n  - name: laptop\n    provider: here\n    region: r1\n"
                 "    node_pools: [{name: h200, gpu_type: H200, gpus_per_node: 2, nodes: 1}]\n"
                 "    local: {output_dir: " + dir.path() + "/out}\n"
                 "teams: [{name: nlp}]\n"
                 "identity:\n"
                 "  workload: {audiences: [\"" + pool + "\", api://AzureADTokenExchange]}\n"
                 "  federations:\n"
                 "    - {name: gcp-ml, kind: gcp, audience: \"" + pool + "\", token_url: \"http://127.0.0.1:" +
                     std::to_string(google) + "/v1/token\", default: true}\n"
                 "    - {name: azure-ml, kind: azure, tenant_id: tenant-1, client_id: client-1, authority_host: "
                 "\"https://127.0.0.1:" + std::to_string(entra) + "\", default: true}\n");
  const std::string program =
      "import http.server, json, os, ssl, sys, threading, urllib.parse\n"
      "seen = {}\n"
      "class Endpoint(http.server.BaseHTTPRequestHandler):\n"
      "    def do_POST(self):\n"
      "        form = urllib.parse.parse_qs(self.rfile.read(int(self.headers['Content-Length'])).decode())\n"
      "        seen[self.server.name] = dict({k: v[0] for k, v in form.items()}, path=self.path)\n"
      "        self.send_response(400)\n"
      "        self.send_header('Content-Type', 'application/json')\n"
      "        self.end_headers()\n"
      "        self.wfile.write(b'{\"error\": \"invalid_grant\", \"error_description\": \"a test endpoint\"}')\n"
      "    def log_message(self, *args): pass\n"
      "def serve(name, port, tls):\n"
      "    srv = http.server.HTTPServer(('127.0.0.1', port), Endpoint)\n"
      "    srv.name = name\n"
      "    if tls:\n"
      "        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n"
      "        ctx.load_cert_chain(sys.argv[3] + '/cert.pem', sys.argv[3] + '/key.pem')\n"
      "        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)\n"
      "    threading.Thread(target=srv.serve_forever, daemon=True).start()\n"
      "serve('google', int(sys.argv[1]), False)\n"
      "serve('entra', int(sys.argv[2]), True)\n"
      "google_error = entra_error = None\n"
      "import google.auth, google.auth.transport.requests\n"
      "from azure.identity import WorkloadIdentityCredential\n"
      "try:\n"
      "    creds, _ = google.auth.load_credentials_from_file(os.environ['GOOGLE_APPLICATION_CREDENTIALS'],\n"
      "        scopes=['https://www.googleapis.com/auth/cloud-platform'])\n"
      "    creds.refresh(google.auth.transport.requests.Request())\n"
      "except Exception as e:\n"
      "    google_error = type(e).__name__\n"
      "try:\n"
      "    WorkloadIdentityCredential().get_token('https://management.azure.com/.default')\n"
      "except Exception as e:\n"
      "    entra_error = type(e).__name__\n"
      "config = json.load(open(os.environ['GOOGLE_APPLICATION_CREDENTIALS']))\n"
      "token = lambda f: open(f).read()\n"
      "g, a = seen.get('google', {}), seen.get('entra', {})\n"
      "print(json.dumps({'google_error': google_error, 'entra_error': entra_error,\n"
      "  'google_audience': g.get('audience'), 'google_type': g.get('subject_token_type'),\n"
      "  'google_token_is_the_files': g.get('subject_token') == token(config['credential_source']['file']),\n"
      "  'entra_path': a.get('path'), 'entra_client': a.get('client_id'),\n"
      "  'entra_token_is_the_files': a.get('client_assertion') == token(os.environ['AZURE_FEDERATED_TOKEN_FILE']),\n"
      "  'tokens_look_like_jwts': g.get('subject_token', '').count('.') == 2}))\n";
  Said run = RunProgram(s, dir, program, "REQUESTS_CA_BUNDLE: " + dir.path() + "/cert.pem",
                        std::to_string(google) + " " + std::to_string(entra) + " " + dir.path(), "google_error");
  const json& said = run.said;
  ASSERT_TRUE(said.is_object());
  EXPECT_EQ(said["google_audience"], pool);
  EXPECT_EQ(said["google_type"], "urn:ietf:params:oauth:token-type:jwt");
  EXPECT_TRUE(said["google_token_is_the_files"]) << said.dump();
  EXPECT_TRUE(said["tokens_look_like_jwts"]) << said.dump();
  EXPECT_EQ(said["entra_path"], "/tenant-1/oauth2/v2.0/token");
  EXPECT_EQ(said["entra_client"], "client-1");
  EXPECT_TRUE(said["entra_token_is_the_files"]) << said.dump();
  // Both stopped at the endpoint's refusal: as far as the first call.
  EXPECT_EQ(said["google_error"], "OAuthError");
  EXPECT_EQ(said["entra_error"], "ClientAuthenticationError");
}

}  // namespace
}  // namespace causeway::testing
