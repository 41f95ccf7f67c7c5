// Causeway's workload tokens checked by a real third party: a kube-apiserver
// of the test's own, started with --authentication-config trusting
// Causeway's issuer (discovery and JWKS fetched over HTTPS, a certificate
// of a test CA, the audience `plane`; `sub` mapped to the username and the
// `team` claim to a group). A job on the local executor, given a kubeconfig
// that reads its federated token from its file, lists the Jobs of its own
// team's namespace and is refused another's; the secret broker reads a
// Kubernetes Secret with the same attempt's token; once the token expires,
// the API server refuses it. The signature is checked by the API server,
// not by Causeway.
#include <gtest/gtest.h>

#include <algorithm>
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
                                      "    groups: {expression: '[\"causeway-team:\" + claims.team]'}\n";
  std::string why;
  const std::string out = d + "/out";
  std::filesystem::create_directories(out);
  // The API server's address is known only once it runs, and the estate
  // names it: Causeway and its front start after it. The API server's
  // first fetch of discovery fails, and it tries again every 10 s.
  auto plane = K8sPlane::ApiOnly(d + "/authn.yaml", why);
  ASSERT_TRUE(plane) << why;
  EstateServer s(dir,
                 "providers: [{name: here, kind: local, regions: [{name: r1, zone: eu}]}]\n"
                 "clusters:\n  - name: laptop\n    provider: here\n    region: r1\n"
                 "    node_pools: [{name: cpu, cpus: 4, nodes: 1}]\n"
                 "    local: {output_dir: " + out + "}\n"
                 "teams: [{name: nlp}, {name: vision}]\n"
                 "identity:\n"
                 "  workload: {issuer: \"" + issuer + "\", audiences: [plane], lifetime: 20s}\n"
                 "  federations:\n"
                 "    - {name: plane-nlp, kind: kubernetes, audience: plane, api_server: \"" + plane->api() +
                     "\", ca_file: " + plane->ca() + ", default: true}\n"
                 "  secret_stores:\n"
                 "    - {name: plane-secrets, kind: kubernetes, identity: plane-nlp, cluster: plane, "
                 "teams: {nlp: [\"team-nlp/*\"]}}\n");
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

  // The token, outside the attempt: accepted while it lives, refused once expired.
  std::string token = Read(out + "/token.jwt");
  ASSERT_EQ(std::count(token.begin(), token.end(), '.'), 2) << token;
  auto ask = [&] {
    net::ApiRequest r;
    r.url = plane->api() + "/apis/batch/v1/namespaces/team-nlp/jobs";
    r.headers = {{"Authorization", "Bearer " + token}};
    auto a = net::SendApi(r, net::TlsTrust{plane->ca(), "", ""});
    return a.ok() ? a->status : 0;
  };
  EXPECT_TRUE(Eventually([&] { return ask() == 401; }, std::chrono::seconds(90))) << "an expired token is refused";
  token[token.size() / 2] = token[token.size() / 2] == 'A' ? 'B' : 'A';
  EXPECT_EQ(ask(), 401) << "a token changed in transit is refused";
}

}  // namespace
}  // namespace causeway::testing
