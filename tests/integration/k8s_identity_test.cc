// Causeway's workload tokens checked by a real third party: a kube-apiserver
// of the test's own, started with --authentication-config trusting
// Causeway's issuer (discovery and JWKS fetched over HTTPS, a certificate
// of a test CA, the audience `plane`; `sub` mapped to the username and the
// `team` claim to a group). A job on the local executor, given a kubeconfig
// that reads its federated token from its file, lists the Jobs of its own
// team's namespace and is refused another's; the secret broker reads a
// Kubernetes Secret with the same attempt's token. The API server also
// asks Causeway (an authorization webhook) before acting on a job's token:
// once the owner is deactivated or the attempt has ended, a token it
// verified and cannot call back is refused; once it expires, it is refused
// anyway. The signature is checked by the API server, not by Causeway.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "causeway/subprocess.h"
#include "k8s_plane.h"
#include "net/request.h"
#include "node_peer.h"
#include "s3_peer.h"
#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs `args`; fails the test when it fails.
void RunOk(const std::vector<std::string>& args) {
  auto r = RunProcess(args, {}, "", std::chrono::seconds(60));
  ASSERT_TRUE(r.ok() && r->exit_code == 0) << args.front() << ": " << (r.ok() ? r->err : r.status().ToString());
}

TEST(KubernetesIdentityTest, AnApiServerTrustsAJobsTokenForItsTeamsNamespaceOnly) {
  if (std::string why = PeersMissing(); !why.empty()) GTEST_SKIP() << why;
  if (std::system((std::string(CAUSEWAY_SOURCE_DIR) + "/scripts/k8s/peers.sh --check").c_str()) != 0) {
    GTEST_SKIP() << "the Kubernetes peers are not in their cache (scripts/k8s/peers.sh)";
  }
  TempDir dir("k8s-identity");
  const std::string d = dir.path();
  // The issuer's HTTPS certificate, from a CA of the test's own.
  RunOk({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
       d + "/ca.key", "-out", d + "/ca.crt", "-days", "1", "-subj", "/CN=issuer-test-ca"});
  RunOk({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
       d + "/issuer.key", "-out", d + "/issuer.crt", "-days", "1", "-subj", "/CN=127.0.0.1", "-CA", d + "/ca.crt",
       "-CAkey", d + "/ca.key", "-addext", "subjectAltName=IP:127.0.0.1"});
  const uint16_t front_port = FreePort();
  const std::string issuer = "https://127.0.0.1:" + std::to_string(front_port);
  std::string ca_pem = Read(d + "/ca.crt"), indented;
  for (size_t at = 0; at < ca_pem.size();) {
    size_t nl = ca_pem.find('\n', at);
    if (nl == std::string::npos) nl = ca_pem.size();
    indented += "      " + ca_pem.substr(at, nl - at) + "\n";
    at = nl + 1;
  }
  std::ofstream(d + "/authn.yaml") << "apiVersion: apiserver.config.k8s.io/v1\n"
                                      "kind: AuthenticationConfiguration\n"
                                      "jwt:\n"
                                      "- issuer:\n"
                                      "    url: " << issuer << "\n"
                                      "    audiences: [plane]\n"
                                      "    certificateAuthority: |\n" << indented <<
                                      "  claimMappings:\n"
                                      "    username: {claim: sub, prefix: \"causeway:\"}\n"
                                      "    groups: {expression: '[\"causeway-team:\" + claims.team]'}\n"
                                      "    extra:\n"
                                      "    - {key: causeway.io/attempt, valueExpression: 'string(int(claims.attempt))'}\n";
  const std::string out = d + "/out";
  std::filesystem::create_directories(out);
  const std::string head = "providers: [{name: here, kind: local, regions: [{name: r1, zone: eu}]}]\n"
                           "clusters:\n  - name: laptop\n    provider: here\n    region: r1\n"
                           "    node_pools: [{name: cpu, cpus: 4, nodes: 1}]\n"
                           "    local: {output_dir: " + out + "}\n"
                           "teams: [{name: nlp}, {name: vision}]\n"
                           "identity:\n"
                           "  workload: {issuer: \"" + issuer + "\", audiences: [plane], lifetime: 20s}\n"
                           "  deprovision: {running: finish}\n";
  // Causeway first, for the credential the API server's authorization
  // webhook presents (jobs:read); the API server next, trusting the issuer
  // and asking Causeway about job tokens before RBAC; then Causeway again
  // on the same data with the API server in its estate, and its HTTPS front.
  // The API server's first fetch of discovery fails; it tries every 10 s.
  EstateServer s(dir, head);
  auto reviewer = s.process().Client().Send("POST", "/v1/tokens",
                                            json{{"name", "plane-webhook"}, {"scopes", {"jobs:read"}}}.dump(),
                                            Auth(s.process().admin_token()));
  ASSERT_TRUE(reviewer.ok() && reviewer->status == 201) << (reviewer.ok() ? reviewer->body : "");
  std::ofstream(d + "/webhook.kubeconfig")
      << json{{"apiVersion", "v1"},
              {"kind", "Config"},
              {"clusters", {{{"name", "causeway"},
                             {"cluster", {{"server", issuer + "/v1/k8s/subjectaccessreview"},
                                          {"certificate-authority", d + "/ca.crt"}}}}}},
              {"users", {{{"name", "plane"}, {"user", {{"token", json::parse(reviewer->body)["secret"]}}}}}},
              {"contexts", {{{"name", "causeway"}, {"context", {{"cluster", "causeway"}, {"user", "plane"}}}}}},
              {"current-context", "causeway"}}
             .dump();
  std::ofstream(d + "/authz.yaml") << "apiVersion: apiserver.config.k8s.io/v1\n"
                                      "kind: AuthorizationConfiguration\n"
                                      "authorizers:\n"
                                      "- type: Webhook\n"
                                      "  name: causeway\n"
                                      "  webhook:\n"
                                      "    timeout: 5s\n"
                                      "    subjectAccessReviewVersion: v1\n"
                                      "    matchConditionSubjectAccessReviewVersion: v1\n"
                                      "    failurePolicy: Deny\n"
                                      "    authorizedTTL: 1s\n"
                                      "    unauthorizedTTL: 1s\n"
                                      "    cacheAuthorizedRequests: false\n"
                                      "    cacheUnauthorizedRequests: false\n"
                                      "    connectionInfo: {type: KubeConfigFile, kubeConfigFile: " << d << "/webhook.kubeconfig}\n"
                                      "    matchConditions:\n"
                                      "    - expression: \"request.user.startsWith('causeway:job:')\"\n"
                                      "- type: RBAC\n"
                                      "  name: rbac\n";
  std::string why;
  auto plane = K8sPlane::ApiOnly(d + "/authn.yaml", d + "/authz.yaml", why);
  ASSERT_TRUE(plane) << why;
  std::ofstream(d + "/estate.yaml") << head +
                                           "  federations:\n"
                                           "    - {name: plane-nlp, kind: kubernetes, audience: plane, api_server: \"" +
                                           plane->api() + "\", ca_file: " + plane->ca() + ", default: true}\n"
                                           "  secret_stores:\n"
                                           "    - {name: plane-secrets, kind: kubernetes, identity: plane-nlp, cluster: plane, "
                                           "teams: {nlp: [\"team-nlp/*\"]}}\n";
  s.process().Stop(SIGTERM);
  s.Start();
  NodePeer front("https-front.mjs", {std::to_string(front_port), d + "/issuer.crt", d + "/issuer.key", s.process().url()});
  ASSERT_EQ(front.first_line(), "listening");

  // Each team's namespace with a Job and a Secret; a Role to read them,
  // bound to the group of team nlp in its namespace only.
  std::string objects;
  for (const std::string team : {"nlp", "vision"}) {
    const std::string ns = "team-" + team;
    objects += "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}\n---\n"
               "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: reader, namespace: " + ns + "}\n"
               "rules:\n- {apiGroups: [batch], resources: [jobs], verbs: [get, list]}\n"
               "- {apiGroups: [\"\"], resources: [secrets], verbs: [get]}\n---\n"
               "apiVersion: batch/v1\nkind: Job\nmetadata: {name: " + team + "-job, namespace: " + ns + "}\n"
               "spec: {suspend: true, template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}\n---\n"
               "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: " + ns + "}\n"
               "stringData: {password: pw-" + team + "-5e1f}\n---\n";
  }
  objects += "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: nlp-reads, namespace: team-nlp}\n"
             "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}\n"
             "subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: \"causeway-team:nlp\"}]\n";
  plane->Apply(objects);

  // The job: kubectl with nothing but the kubeconfig the attempt was given.
  const std::string kubectl = plane->bin() + "/kubectl";
  // It first waits until the API server has read Causeway's discovery and
  // keys (its retry after the first, failed fetch).
  std::ofstream(d + "/job.sh")
      << "set -u\n"
         "for i in $(seq 300); do " << kubectl << " auth whoami > /dev/null 2>&1 && break; sleep 0.2; done\n"
         "cp \"$(dirname \"$KUBECONFIG\")/kubernetes.token\" token.jwt\n"
         "ok() { \"$@\" > out.txt 2>&1; echo \"rc=$?\"; cat out.txt; }\n"
         "ok " << kubectl << " get jobs -n team-nlp -o name > nlp.txt\n"
         "ok " << kubectl << " get jobs -n team-vision -o name > vision.txt\n"
         << kubectl << " auth whoami -o json > whoami.json 2>&1\n";
  auto run = [&](const std::string& spec) {
    const std::string job = s.Submit("resources: {cpus: 1}\nlabels: {team: nlp, owner: alice@corp.example}\n" + spec);
    EXPECT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + job)["state"] == "succeeded"; }, std::chrono::seconds(120)))
        << s.Get("/v1/jobs/" + job).dump(2) << Read(out + "/" + job + "-1.log");
    return job;
  };
  const std::string job = run("name: lists-its-jobs\nrun: bash " + d + "/job.sh\n");

  EXPECT_NE(Read(out + "/nlp.txt").find("rc=0\njob.batch/nlp-job"), std::string::npos) << Read(out + "/nlp.txt");
  const std::string vision = Read(out + "/vision.txt");
  EXPECT_EQ(vision.find("rc=0"), std::string::npos) << vision;
  EXPECT_NE(vision.find("is forbidden: User \"causeway:job:" + job + "\" cannot list resource \"jobs\""), std::string::npos)
      << vision;
  json who = json::parse(Read(out + "/whoami.json"), nullptr, false);
  ASSERT_TRUE(who.is_object()) << Read(out + "/whoami.json");
  EXPECT_EQ(who["status"]["userInfo"]["username"], "causeway:job:" + job);
  EXPECT_NE(who["status"]["userInfo"]["groups"].dump().find("causeway-team:nlp"), std::string::npos) << who.dump();
  // The broker reads team nlp's Secret with the attempt's own token.
  run("name: reads-a-secret\nsecrets: {DB_PASSWORD: \"k8s://plane/team-nlp/db#password\"}\n"
      "run: |\n  printf '%s' \"$DB_PASSWORD\" | sha256sum | cut -c1-64 > db.txt\n");
  auto sha = RunProcess({"sha256sum"}, {}, "pw-nlp-5e1f", std::chrono::seconds(10));
  ASSERT_TRUE(sha.ok());
  EXPECT_EQ(Read(out + "/db.txt"), sha->out.substr(0, 64) + "\n");

  // Tokens outside their attempts, asked with as a third party would.
  auto ask = [&](const std::string& token, std::string* body = nullptr) {
    net::ApiRequest r;
    r.url = plane->api() + "/apis/batch/v1/namespaces/team-nlp/jobs";
    r.headers = {{"Authorization", "Bearer " + token}};
    auto a = net::SendApi(r, net::TlsTrust{plane->ca(), "", ""});
    if (body && a.ok()) *body = a->body;
    return a.ok() ? a->status : 0;
  };
  // A running job's token is accepted; once its owner is deactivated (its
  // work left to finish) the API server's next request with the same,
  // unexpired token is refused: Causeway's review denies it.
  auto scim = s.process().Client().Send("POST", "/v1/tokens", json{{"name", "idp"}, {"scopes", {"scim:provision"}}}.dump(),
                                        Auth(s.process().admin_token()));
  ASSERT_TRUE(scim.ok() && scim->status == 201);
  auto alice = s.process().Client().Send(
      "POST", "/scim/v2/Users",
      json{{"schemas", {"urn:ietf:params:scim:schemas:core:2.0:User"}}, {"userName", "alice@corp.example"}}.dump(),
      Auth(json::parse(scim->body)["secret"]));
  ASSERT_TRUE(alice.ok() && alice->status == 201) << (alice.ok() ? alice->body : "");
  const std::string live = s.Submit("name: keeps-running\nresources: {cpus: 1}\nlabels: {team: nlp, owner: alice@corp.example}\n"
                                    "run: |\n  echo \"$(dirname \"$KUBECONFIG\")/kubernetes.token\" > live.path\n"
                                    "  for i in $(seq 1200); do [ -e stop ] && break; sleep 0.1; done\n");
  ASSERT_TRUE(Eventually([&] { return std::filesystem::exists(out + "/live.path"); }, std::chrono::seconds(60)));
  std::string live_path = Read(out + "/live.path");
  live_path.pop_back();
  auto live_token = [&] { return Read(live_path); };  // the file as refreshed
  EXPECT_EQ(ask(live_token()), 200);
  auto off = s.process().Client().Send("POST", "/v1/people/alice@corp.example/deactivate", "{}", Auth(s.process().admin_token()));
  ASSERT_TRUE(off.ok() && off->status == 200) << (off.ok() ? off->body : "");
  EXPECT_EQ(s.Get("/v1/jobs/" + live)["state"], "running") << "its work is left to finish";
  std::string refusal;
  EXPECT_EQ(ask(live_token(), &refusal), 403);
  EXPECT_NE(refusal.find("the job's owner alice@corp.example is deactivated"), std::string::npos) << refusal;
  std::ofstream(out + "/stop").close();

  // The first job's token, copied out while it ran: its attempt has ended,
  // so it is refused before it expires (unless it already has), and after.
  std::string token = Read(out + "/token.jwt");
  ASSERT_EQ(std::count(token.begin(), token.end(), '.'), 2) << token;
  const int ended = ask(token, &refusal);
  EXPECT_TRUE(ended == 403 || ended == 401) << ended << refusal;
  if (ended == 403) {
    EXPECT_NE(refusal.find("has ended: its tokens died with it"), std::string::npos) << refusal;
  }
  EXPECT_TRUE(Eventually([&] { return ask(token) == 401; }, std::chrono::seconds(90))) << "an expired token is refused";
  token[token.size() / 2] = token[token.size() / 2] == 'A' ? 'B' : 'A';
  EXPECT_EQ(ask(token), 401) << "a token changed in transit is refused";
}

}  // namespace
}  // namespace causeway::testing
