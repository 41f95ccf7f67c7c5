#include <gtest/gtest.h>

#include "causeway/estate.h"
#include "providers/registry.h"
#include "providers/sim/sim_settings.h"
#include "providers/slurm/slurm_settings.h"
#include "causeway/job_spec.h"
#include "causeway/records.h"
#include "spec/spec_json.h"

namespace causeway {
namespace {

TEST(EstateTest, ExampleAndEmbeddedEstatesAreValid) {
  auto file = providers::LoadEstateFile(std::string(CAUSEWAY_SOURCE_DIR) + "/examples/estate.yaml");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto embedded = providers::ParseEstate(DefaultEstateYaml(), "embedded");
  ASSERT_TRUE(embedded.ok()) << embedded.status().ToString();
  EXPECT_EQ(embedded->clusters.size(), file->clusters.size());
  const Cluster* c = embedded->FindCluster("nebius-eu-h200");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->zone, "eu");
  EXPECT_EQ(c->TotalGpus(), 128);
  const Price* p = embedded->FindPrice("nebius-eu-h200", "H200");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->on_demand.micros(), 3'500'000);
  ASSERT_EQ(embedded->reservations.size(), 1u);
  EXPECT_EQ(embedded->reservations[0].count, 64);
  ASSERT_EQ(embedded->reaper.size(), 1u);
  EXPECT_EQ(embedded->reaper[0].threshold_percent, 10);
  EXPECT_EQ(embedded->reaper[0].window, Micros(20LL * 60 * 1000000));
  EXPECT_EQ(embedded->reaper[0].exempt_labels, std::vector<std::string>{"keep-alive"});
}

constexpr const char* kBase = R"(providers:
  - name: nebius
    kind: sim
    regions: [{name: eu-north1, zone: eu}]
clusters:
  - name: c1
    provider: nebius
    region: eu-north1
    node_pools: [{name: p, gpu_type: H200, gpus_per_node: 8, nodes: 2}]
)";

struct Case {
  const char* name;
  std::string extra;  // appended to kBase (or replacing it when it starts with '!')
  const char* error;
  int line;
};

TEST(EstateTest, ReportsProblemsWithPositions) {
  const Case cases[] = {
      {"unknown_top", "clustres: []\n", "did you mean \"clusters\"", 10},
      {"bad_kind", "!providers:\n  - {name: x, kind: cloud, regions: [{name: r, zone: eu}]}\n", "unknown kind", 2},
      {"unknown_provider",
       "!providers:\n  - {name: nebius, kind: sim, regions: [{name: r, zone: eu}]}\nclusters:\n"
       "  - {name: c, provider: nebuis, region: r, node_pools: [{name: p, gpu_type: H100, gpus_per_node: 8, nodes: 1}]}\n",
       "did you mean \"nebius\"", 4},
      {"unknown_region",
       "!providers:\n  - {name: n, kind: sim, regions: [{name: r, zone: eu}]}\nclusters:\n"
       "  - {name: c, provider: n, region: x, node_pools: [{name: p, gpu_type: H100, gpus_per_node: 8, nodes: 1}]}\n",
       "has no region \"x\"", 4},
      {"reaper_action", "reaper:\n  - {name: r, action: kill}\n", "expected cancel or warn", 11},
      {"reaper_window", "reaper:\n  - {name: r, window: soon}\n", "invalid duration \"soon\"", 11},
      {"reaper_threshold", "reaper:\n  - {name: r, threshold: 150}\n", "from 1 to 100", 11},
      {"reaper_team", "reaper:\n  - {name: r, team: nobody}\n", "unknown team \"nobody\"", 11},
      {"price_wrong_gpu", "prices:\n  - {cluster: c1, gpu_type: H100, on_demand: \"2\"}\n", "has no H100 node pool", 11},
      {"price_bad_amount", "prices:\n  - {cluster: c1, gpu_type: H200, on_demand: \"2.1234567\"}\n", "six decimal places", 11},
      {"price_twice",
       "prices:\n  - {cluster: c1, gpu_type: H200, on_demand: \"2\"}\n  - {cluster: c1, gpu_type: H200, on_demand: \"3\"}\n",
       "already given", 12},
      {"reservation_too_big",
       "reservations:\n  - {name: r, cluster: c1, gpu_type: H200, count: 17, start: 2026-01-01, end: 2027-01-01, price: \"2\"}\n",
       "has only 16", 11},
      {"reservation_backwards",
       "reservations:\n  - {name: r, cluster: c1, gpu_type: H200, count: 8, start: 2027-01-01, end: 2026-01-01, price: \"2\"}\n",
       "end must be after the start", 11},
      {"dataset_unknown_location", "datasets:\n  - {name: d, replicas: [gcp/us-central1]}\n", "unknown location", 11},
      {"duplicate_team", "teams:\n  - {name: nlp}\n  - {name: nlp}\n", "duplicate team", 12},
      {"gpus_per_node_zero",
       "!providers:\n  - {name: n, kind: sim, regions: [{name: r, zone: eu}]}\nclusters:\n"
       "  - {name: c, provider: n, region: r, node_pools: [{name: p, gpu_type: H100, gpus_per_node: 0, nodes: 1}]}\n",
       "out of range", 4},
      {"bad_interconnect",
       "!providers:\n  - {name: n, kind: sim, regions: [{name: r, zone: eu}]}\nclusters:\n"
       "  - {name: c, provider: n, region: r, node_pools: [{name: p, gpu_type: H100, gpus_per_node: 8, nodes: 1, interconnect: carrier-pigeon}]}\n",
       "unknown interconnect", 4},
      {"slurm_bad_interface",
       "!providers:\n  - {name: s, kind: slurm, regions: [{name: r, zone: eu}]}\nclusters:\n"
       "  - name: c\n    provider: s\n    region: r\n    node_pools: [{name: p, gpu_type: H100, gpus_per_node: 8, nodes: 1}]\n"
       "    slurm: {interfaces: [rest, ssh], url: \"http://h:1\", user: u, token_file: t, partition: p, output_dir: /o}\n",
       "unknown interface \"ssh\": expected rest or cli", 8},
      {"slurm_two_tokens",
       "!providers:\n  - {name: s, kind: slurm, regions: [{name: r, zone: eu}]}\nclusters:\n"
       "  - name: c\n    provider: s\n    region: r\n    node_pools: [{name: p, gpu_type: H100, gpus_per_node: 8, nodes: 1}]\n"
       "    slurm: {url: \"http://h:1\", user: u, token_file: t, token_command: x, partition: p, output_dir: /o}\n",
       "exactly one of token_file and token_command", 8},
      {"slurm_rest_needs_url",
       "!providers:\n  - {name: s, kind: slurm, regions: [{name: r, zone: eu}]}\nclusters:\n"
       "  - name: c\n    provider: s\n    region: r\n    node_pools: [{name: p, gpu_type: H100, gpus_per_node: 8, nodes: 1}]\n"
       "    slurm: {interfaces: [cli, rest], token_file: t, partition: p, output_dir: /o}\n",
       "url", 8},
      {"bill_resources_not_a_list",
       "!providers:\n  - {name: n, kind: sim, regions: [{name: r, zone: eu}]}\nclusters:\n"
       "  - {name: c, provider: n, region: r, bill_resources: cw-*, node_pools: [{name: p, gpu_type: H100, gpus_per_node: 8, nodes: 1}]}\n",
       "expected a list such as [cw-h100-*", 4},
      {"bill_resources_empty",
       "!providers:\n  - {name: n, kind: sim, regions: [{name: r, zone: eu}]}\nclusters:\n"
       "  - name: c\n    provider: n\n    region: r\n    bill_resources: [cw-*, \"\"]\n"
       "    node_pools: [{name: p, gpu_type: H100, gpus_per_node: 8, nodes: 1}]\n",
       "non-empty ResourceId pattern", 7},
      {"access_role", "access:\n  - {group: g, role: superuser}\n", "unknown role \"superuser\"", 11},
      {"access_close_role", "access:\n  - {group: g, role: reseacher}\n", "did you mean \"researcher\"", 11},
      {"access_team", "access:\n  - {group: g, role: researcher, team: nobody}\n", "unknown team \"nobody\"", 11},
      {"access_group", "access:\n  - {role: viewer}\n", "missing required field \"group\"", 11},
      {"oidc_audience", "identity:\n  oidc: {issuer: \"https://idp.example\"}\n", "needs audience", 11},
      {"oidc_issuer", "identity:\n  oidc: {issuer: idp.example, audience: a}\n", "expected an https:// URL", 11},
      {"oidc_leeway", "identity:\n  oidc: {issuer: \"https://i\", audience: a, leeway: 1h}\n", "at most 5m", 11},
      {"workload_alg", "identity:\n  workload: {audiences: [vault], alg: HS256}\n", "expected ES256 or RS256", 11},
      {"workload_lifetime", "identity:\n  workload: {audiences: [vault], lifetime: 48h}\n", "at most 24h", 11},
      {"workload_audiences", "identity:\n  workload: {lifetime: 1h}\n", "needs audiences", 11},
      {"federation_kind", "identity:\n  workload: {audiences: [sts.amazonaws.com]}\n  federations:\n    - {name: f, kind: oracle}\n",
       "expected aws, gcp, azure or kubernetes", 13},
      {"federation_arn",
       "identity:\n  workload: {audiences: [sts.amazonaws.com]}\n  federations:\n    - {name: f, kind: aws, role_arn: admin}\n",
       "expected a role's ARN", 13},
      {"federation_audience",
       "identity:\n  workload: {audiences: [sts.amazonaws.com]}\n  federations:\n"
       "    - {name: f, kind: azure, tenant_id: t, client_id: c}\n",
       "api://AzureADTokenExchange is not among identity.workload.audiences", 13},
      {"federation_without_workload",
       "identity:\n  federations:\n    - {name: f, kind: aws, role_arn: \"arn:aws:iam::1:role/r\"}\n",
       "configure identity.workload first", 12},
      {"federation_team",
       "identity:\n  workload: {audiences: [sts.amazonaws.com]}\n  federations:\n"
       "    - {name: f, kind: aws, role_arn: \"arn:aws:iam::1:role/r\", teams: [nobody]}\n",
       "unknown team \"nobody\"", 13},
      {"federation_other_kinds_key",
       "identity:\n  workload: {audiences: [sts.amazonaws.com]}\n  federations:\n"
       "    - {name: f, kind: aws, role_arn: \"arn:aws:iam::1:role/r\", tenant_id: t}\n",
       "tenant_id is for kind azure", 13},
      {"federation_gcp_pool",
       "identity:\n  workload: {audiences: [sts.amazonaws.com]}\n  federations:\n    - {name: f, kind: gcp}\n",
       "workload identity pool provider", 13},
      {"secret_store_identity",
       "identity:\n  workload: {audiences: [sts.amazonaws.com]}\n  secret_stores:\n"
       "    - {name: s, identity: nowhere, region: r, teams: {}}\n",
       "expected one of identity.federations of kind aws", 13},
      {"secret_store_pattern",
       "teams: [{name: nlp}]\nidentity:\n  workload: {audiences: [sts.amazonaws.com]}\n  federations:\n"
       "    - {name: f, kind: aws, role_arn: \"arn:aws:iam::1:role/r\"}\n  secret_stores:\n"
       "    - {name: s, identity: f, region: r, teams: {nlp: [\"a*b\"]}}\n",
       "a prefix ending in a single *", 16},
      {"secret_store_team_not_allowed",
       "teams: [{name: nlp}, {name: cv}]\nidentity:\n  workload: {audiences: [sts.amazonaws.com]}\n  federations:\n"
       "    - {name: f, kind: aws, role_arn: \"arn:aws:iam::1:role/r\", teams: [cv]}\n  secret_stores:\n"
       "    - {name: s, identity: f, region: r, teams: {nlp: [x]}}\n",
       "identity \"f\", which reads this store, is not allowed to team \"nlp\"", 16},
      {"deprovision_policy", "identity:\n  deprovision: {queued: delete}\n", "expected cancel, keep or reassign", 11},
      {"deprovision_reassign", "identity:\n  deprovision: {queued: reassign}\n", "reassign_to", 11},
      {"breakglass_approvers", "identity:\n  breakglass: {approvers: 2, groups: [g], roles: [admin]}\n", "from 0 to 1", 11},
      {"breakglass_role", "identity:\n  breakglass: {roles: [god], groups: [g]}\n", "unknown role \"god\"", 11},
      {"identity_key", "identity:\n  saml: {}\n", "saml", 11},
      {"audit_provider", "audit:\n  buckets:\n    - {provider: aws, name: b}\n", "unknown provider \"aws\"", 12},
      {"audit_source", "audit:\n  log_sources:\n    - {provider: nebius, source: splunk}\n", "expected k8s, cloudtrail", 12},
      {"audit_date", "audit:\n  buckets:\n    - {provider: nebius, name: b, created: last-year}\n", "expected a date", 12},
      {"audit_dup", "audit:\n  buckets:\n    - {provider: nebius, name: b}\n    - {provider: nebius, name: b}\n", "duplicate bucket", 13},
      {"audit_since", "audit:\n  data_logging:\n    - {provider: nebius}\n", "missing required field \"since\"", 12},
      {"audit_key", "audit:\n  buckets:\n    - {provider: nebius, name: b, logging: true}\n", "logging", 12},
      {"cpu_pool_without_cpus",
       "!providers:\n  - {name: n, kind: sim, regions: [{name: r, zone: eu}]}\nclusters:\n"
       "  - {name: c, provider: n, region: r, node_pools: [{name: p, nodes: 1}]}\n",
       "must give its cpus per node", 4},
      {"gpu_type_cpu",
       "!providers:\n  - {name: n, kind: sim, regions: [{name: r, zone: eu}]}\nclusters:\n"
       "  - {name: c, provider: n, region: r, node_pools: [{name: p, gpu_type: cpu, gpus_per_node: 8, nodes: 1}]}\n",
       "CPU is not a GPU type", 4},
      {"cpu_pool_gpus_per_node",
       "!providers:\n  - {name: n, kind: sim, regions: [{name: r, zone: eu}]}\nclusters:\n"
       "  - {name: c, provider: n, region: r, node_pools: [{name: p, gpus_per_node: 8, cpus: 32, nodes: 1}]}\n",
       "leave gpus_per_node out for a CPU-only pool", 4},
      {"cpu_pool_too_many_cpus",
       "!providers:\n  - {name: n, kind: sim, regions: [{name: r, zone: eu}]}\nclusters:\n"
       "  - {name: c, provider: n, region: r, node_pools: [{name: p, cpus: 2048, nodes: 1}]}\n",
       "at most 1024 per node", 4},
      {"cpu_price_without_cpu_pool", "prices:\n  - {cluster: c1, gpu_type: CPU, on_demand: \"0.05\"}\n",
       "has no CPU node pool", 11},
      {"missing_pools", "!providers:\n  - {name: n, kind: sim, regions: [{name: r, zone: eu}]}\nclusters:\n  - {name: c, provider: n, region: r}\n",
       "expected a list of node pools", 4},
  };
  for (const auto& c : cases) {
    std::string text = c.extra[0] == '!' ? c.extra.substr(1) : std::string(kBase) + c.extra;
    auto r = providers::ParseEstate(text, "estate.yaml");
    ASSERT_FALSE(r.ok()) << c.name;
    const Diagnostic& d = r.status().diagnostics().front();
    EXPECT_NE(d.message.find(c.error), std::string::npos) << c.name << ": " << d.ToString();
    EXPECT_EQ(d.line, c.line) << c.name << ": " << d.ToString();
    EXPECT_EQ(d.file, "estate.yaml");
  }
}

TEST(EstateTest, ReadsAccessAndIdentity) {
  auto e = providers::ParseEstate(std::string(kBase) + R"(teams: [{name: nlp}]
access:
  - {group: NLP-Researchers, role: researcher, team: nlp}
  - {group: security, role: auditor}
identity:
  oidc: {issuer: "https://corp.okta.com/", audiences: [a, b], username_claim: upn, leeway: 30s, require_provisioned: true}
  workload: {audiences: [sts.amazonaws.com, "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/ml/providers/cw", api://AzureADTokenExchange], lifetime: 15m, alg: RS256}
  federations:
    - {name: aws-data, kind: aws, role_arn: "arn:aws:iam::123456789012:role/training", teams: [nlp], default: true}
    - {name: gcp-ml, kind: gcp, audience: "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/ml/providers/cw", service_account: trainer@p.iam.gserviceaccount.com}
    - {name: azure-ml, kind: azure, tenant_id: t-1, client_id: c-1}
  deprovision: {queued: reassign, reassign_to: lead@corp.example, running: finish}
  breakglass: {approvers: 1, max_duration: 2h, roles: [admin, auditor], groups: [sre-oncall], webhook: "https://hooks.example/bg"}
)", "estate.yaml");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  ASSERT_EQ(e->access.size(), 2u);
  EXPECT_EQ(e->access[0].group, "NLP-Researchers");
  EXPECT_EQ(e->access[0].team, "nlp");
  EXPECT_EQ(e->access[0].source, "access[0]");
  EXPECT_EQ(e->access[1].team, "");
  ASSERT_TRUE(e->identity.oidc);
  EXPECT_EQ(e->identity.oidc->issuer, "https://corp.okta.com");  // no trailing slash
  EXPECT_EQ(e->identity.oidc->audiences, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(e->identity.oidc->username_claim, "upn");
  EXPECT_EQ(e->identity.oidc->groups_claim, "groups");
  EXPECT_EQ(e->identity.oidc->leeway, Micros(30LL * 1000000));
  EXPECT_TRUE(e->identity.oidc->require_provisioned);
  ASSERT_TRUE(e->identity.workload);
  EXPECT_EQ(e->identity.workload->issuer, "");  // the server's own address
  EXPECT_EQ(e->identity.workload->alg, "RS256");
  EXPECT_EQ(e->identity.workload->lifetime, Micros(15LL * 60 * 1000000));
  ASSERT_EQ(e->identity.federations.size(), 3u);
  const CloudFederation* aws = e->identity.FindFederation("aws-data");
  ASSERT_NE(aws, nullptr);
  EXPECT_EQ(aws->audience, "sts.amazonaws.com");  // each kind's default
  EXPECT_TRUE(aws->by_default);
  EXPECT_TRUE(aws->AllowsTeam("nlp"));
  EXPECT_FALSE(aws->AllowsTeam("vision"));
  EXPECT_TRUE(e->identity.FindFederation("gcp-ml")->AllowsTeam("vision")) << "no teams: every team";
  EXPECT_EQ(e->identity.FindFederation("gcp-ml")->token_url, "https://sts.googleapis.com/v1/token");
  EXPECT_EQ(e->identity.FindFederation("azure-ml")->audience, "api://AzureADTokenExchange");
  EXPECT_EQ(e->identity.deprovision.queued, "reassign");
  EXPECT_EQ(e->identity.deprovision.reassign_to, "lead@corp.example");
  EXPECT_EQ(e->identity.deprovision.running, "finish");
  EXPECT_EQ(e->identity.breakglass.approvers, 1);
  EXPECT_EQ(e->identity.breakglass.roles, (std::vector<std::string>{"admin", "auditor"}));
  EXPECT_EQ(e->identity.breakglass.webhook, "https://hooks.example/bg");
}

TEST(EstateTest, SlurmClustersChooseTheirInterfaces) {
  const std::string head =
      "providers:\n  - {name: s, kind: slurm, regions: [{name: r, zone: eu}]}\nclusters:\n"
      "  - name: c\n    provider: s\n    region: r\n    node_pools: [{name: p, gpu_type: H100, gpus_per_node: 8, nodes: 1}]\n";
  auto cli = providers::ParseEstate(head + "    slurm: {interfaces: [cli], conf: /etc/slurm/slurm.conf, accounting: true, "
                                "partition: gpu, output_dir: /o}\n",
                         "estate.yaml");
  ASSERT_TRUE(cli.ok()) << cli.status().ToString();
  ASSERT_NE(SettingsAs<SlurmSettings>(cli->clusters[0]), nullptr);
  const SlurmSettings& s = *SettingsAs<SlurmSettings>(cli->clusters[0]);
  EXPECT_EQ(s.interfaces, std::vector<std::string>{"cli"});
  EXPECT_EQ(s.conf, "/etc/slurm/slurm.conf");
  EXPECT_TRUE(s.accounting);
  auto rest = providers::ParseEstate(head + "    slurm: {url: \"http://h:1\", user: u, token_command: \"scontrol token\", "
                                 "partition: gpu, output_dir: /o}\n",
                          "estate.yaml");
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  const SlurmSettings* r = SettingsAs<SlurmSettings>(rest->clusters[0]);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->interfaces, std::vector<std::string>{"rest"});
  EXPECT_EQ(r->token_command, "scontrol token");
  EXPECT_FALSE(r->accounting);
}

// A kind registered from outside the build's own (as a Nomad adapter
// would be) reads its own cluster block, with the estate's error positions;
// another kind's block on its clusters, and a kind nobody registered, are
// refused with what would be accepted.
struct NomadSettings final : KindSettings {
  std::string context;
};

TEST(EstateTest, EachKindReadsItsOwnBlocks) {
  providers::Registry kinds = providers::BuiltInKinds();
  providers::Kind nomad;
  nomad.estate.cluster_key = "nomad";
  nomad.estate.parse_cluster = [](SettingsReader& r) -> std::shared_ptr<const KindSettings> {
    if (!r.CheckKeys({"context"})) return nullptr;
    auto s = std::make_shared<NomadSettings>();
    s->context = r.String("context", true);
    return s;
  };
  nomad.estate.cluster_block_required = "a cluster of a nomad provider needs nomad: {context}";
  ASSERT_TRUE(kinds.Register("nomad", std::move(nomad)).ok());
  // A second kind under a name already taken is refused, as Kueue refuses a
  // second integration of one name; the first stays.
  Status twice = kinds.Register("nomad", providers::Kind{});
  EXPECT_EQ(twice.code(), Code::kAlreadyExists) << twice.ToString();
  EXPECT_EQ(kinds.Register("sim", providers::Kind{}).code(), Code::kAlreadyExists);
  const std::string head =
      "providers:\n  - {name: k, kind: nomad, regions: [{name: r, zone: eu}]}\nclusters:\n"
      "  - name: c\n    provider: k\n    region: r\n    node_pools: [{name: p, gpu_type: H100, gpus_per_node: 8, nodes: 1}]\n";
  auto ok = providers::ParseEstate(head + "    nomad: {context: prod}\n", "estate.yaml", kinds);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  const NomadSettings* k = SettingsAs<NomadSettings>(ok->clusters[0]);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->context, "prod");
  EXPECT_EQ(SettingsAs<SlurmSettings>(ok->clusters[0]), nullptr);

  auto missing = providers::ParseEstate(head + "    nomad: {contxt: prod}\n", "estate.yaml", kinds);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().ToString().find("estate.yaml:8:"), std::string::npos) << missing.status().ToString();
  EXPECT_NE(missing.status().ToString().find("did you mean \"context\""), std::string::npos)
      << missing.status().ToString();

  auto none = providers::ParseEstate(head, "estate.yaml", kinds);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().ToString().find("needs nomad: {context}"), std::string::npos) << none.status().ToString();

  auto other = providers::ParseEstate(head + "    nomad: {context: prod}\n    local: {output_dir: /o}\n",
                                      "estate.yaml", kinds);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().ToString().find("local settings are for clusters of kind local, not nomad"),
            std::string::npos)
      << other.status().ToString();

  // Without the registration the kind is unknown, and the error lists the build's kinds.
  auto unknown = providers::ParseEstate(head + "    nomad: {context: prod}\n", "estate.yaml");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().ToString().find("unknown kind \"nomad\": expected one of kubernetes, local, sim, slurm"),
            std::string::npos)
      << unknown.status().ToString();
}

// A kind that names a block but gives no parser for it has no block: the
// key is refused as unknown, never called.
TEST(EstateTest, ABlockWithoutAParserIsAnUnknownKey) {
  providers::Registry kinds = providers::BuiltInKinds();
  providers::Kind bare;
  bare.estate.cluster_key = "bare";
  ASSERT_TRUE(kinds.Register("bare", std::move(bare)).ok());
  auto e = providers::ParseEstate(
      "providers:\n  - {name: b, kind: bare, regions: [{name: r, zone: eu}]}\nclusters:\n"
      "  - name: c\n    provider: b\n    region: r\n    node_pools: [{name: p, gpu_type: H100, gpus_per_node: 8, nodes: 1}]\n"
      "    bare: {x: 1}\n",
      "estate.yaml", kinds);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().ToString().find("bare"), std::string::npos) << e.status().ToString();
}

TEST(EstateTest, SimulatedProvidersReadTheirMisbehaviour) {
  auto e = providers::ParseEstate(
      "providers: [{name: p, kind: sim, regions: [{name: r, zone: eu}], sim: {spot_preemption_per_hour: 0.5}}]\n",
      "estate.yaml");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  const sim::SimBehaviour* b = SettingsAs<sim::SimBehaviour>(e->providers[0]);
  ASSERT_NE(b, nullptr);
  EXPECT_DOUBLE_EQ(b->spot_preemption_per_hour, 0.5);
  EXPECT_DOUBLE_EQ(b->node_failure_per_hour, 0.0);
  auto bad = providers::ParseEstate(
      "providers: [{name: p, kind: sim, regions: [{name: r, zone: eu}], sim: {node_failure_per_hour: lots}}]\n",
      "estate.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("providers[0].sim.node_failure_per_hour"), std::string::npos)
      << bad.status().ToString();
  EXPECT_NE(bad.status().ToString().find("expected a rate per hour from 0 to 100"), std::string::npos);
  auto wrong = providers::ParseEstate(
      "providers: [{name: p, kind: local, regions: [{name: r, zone: eu}], sim: {node_failure_per_hour: 1}}]\n",
      "estate.yaml");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().ToString().find("sim settings are for providers of kind sim, not local"),
            std::string::npos)
      << wrong.status().ToString();
}

// A pool without gpu_type is CPU-only: it counts CPUs where others count
// GPUs, and quotas, prices and reservations name it CPU.
TEST(EstateTest, CpuOnlyPoolsCountCpusAndAreNamedCpu) {
  auto e = providers::ParseEstate(std::string(kBase) + R"(
  - name: c2
    provider: nebius
    region: eu-north1
    node_pools: [{name: cpu, cpus: 64, memory_gb: 256, nodes: 4}]
prices: [{cluster: c2, gpu_type: cpu, on_demand: "0.04", spot: "0.01"}]
reservations: [{name: r, cluster: c2, gpu_type: CPU, count: 256, start: 2026-01-01, end: 2027-01-01, price: "0.03"}]
teams: [{name: t}]
queues: [{name: q, team: t, quotas: [{flavor: CPU, nominal: 128}, {flavor: CPU-spot, nominal: 64}]}]
)", "estate.yaml");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  const Cluster* c = e->FindCluster("c2");
  ASSERT_NE(c, nullptr);
  const NodePool& pool = c->node_pools.at(0);
  EXPECT_TRUE(pool.cpu_only());
  EXPECT_EQ(pool.gpu_type, "CPU");
  EXPECT_EQ(pool.gpus_per_node, 64);
  EXPECT_EQ(c->TotalGpus(), 0);
  EXPECT_FALSE(e->FindCluster("c1")->node_pools.at(0).cpu_only());
  ASSERT_NE(e->FindPrice("c2", "CPU"), nullptr);
  EXPECT_EQ(e->FindPrice("c2", "CPU")->on_demand.micros(), 40'000);
  EXPECT_EQ(CountOf("CPU", 8), "8 CPUs");
  EXPECT_EQ(CountOf("CPU-spot", 1), "1 spot CPU");
  EXPECT_EQ(CountOf("H100", 8), "8 H100 GPUs");
  // A reservation counts CPUs against the pool's.
  auto over = providers::ParseEstate(std::string(kBase) + R"(
  - {name: c2, provider: nebius, region: eu-north1, node_pools: [{name: cpu, cpus: 64, nodes: 4}]}
reservations: [{name: r, cluster: c2, gpu_type: CPU, count: 512, start: 2026-01-01, end: 2027-01-01, price: "0.03"}]
)", "estate.yaml");
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().ToString().find("reserves 512 CPUs but cluster \"c2\" has only 256"), std::string::npos)
      << over.status().ToString();
}

// A job's identities: ones the estate has, allowed to its team, one per
// cloud; refused on submission otherwise.
TEST(EstateTest, AJobsIdentitiesAreTheEstatesAndItsTeams) {
  auto estate = providers::ParseEstate(std::string(kBase) + R"(teams: [{name: nlp}, {name: vision}]
identity:
  workload: {audiences: [sts.amazonaws.com]}
  federations:
    - {name: aws-data, kind: aws, role_arn: "arn:aws:iam::123456789012:role/training", teams: [nlp]}
    - {name: aws-logs, kind: aws, role_arn: "arn:aws:iam::123456789012:role/logs"}
)", "estate.yaml");
  ASSERT_TRUE(estate.ok()) << estate.status().ToString();
  auto check = [&](const std::string& yaml) {
    auto spec = ParseJobSpec("resources: {accelerators: H200:8}\n" + yaml, "job.yaml");
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    return CheckJobAgainstEstate(spec->spec, *estate, "job.yaml").message();
  };
  EXPECT_EQ(check("labels: {team: nlp}\nidentities: [aws-data]\n"), "");
  EXPECT_EQ(check("labels: {team: vision}\nidentities: [aws-logs]\n"), "");
  EXPECT_NE(check("labels: {team: vision}\nidentities: [aws-data]\n").find("identity \"aws-data\" is not allowed to team \"vision\""),
            std::string::npos);
  EXPECT_NE(check("labels: {team: nlp}\nidentities: [aws-dat]\n").find("unknown identity \"aws-dat\"; did you mean \"aws-data\"?"),
            std::string::npos)
      << check("labels: {team: nlp}\nidentities: [aws-dat]\n");
  EXPECT_NE(check("labels: {team: nlp}\nidentities: [aws-data, aws-logs]\n").find("two identities of kind aws"),
            std::string::npos);
  // The list itself, as the spec parser reads it.
  EXPECT_NE(ParseJobSpec("identities: aws-data\n", "j").status().message().find("expected a list"), std::string::npos);
  EXPECT_NE(ParseJobSpec("identities: [Bad Name]\n", "j").status().message().find("identity's name"), std::string::npos);
  EXPECT_NE(ParseJobSpec("identities: [a, a]\n", "j").status().message().find("named twice"), std::string::npos);
}

// Secret references: a store grants each team names or prefixes; a job
// asking for what its team may not read is refused on submission, with the
// field; the reference stays in the spec, the value never was there.
TEST(EstateTest, ASecretReferenceIsRefusedUnlessAStoreGrantsItToTheTeam) {
  auto estate = providers::ParseEstate(std::string(kBase) + R"(teams: [{name: nlp}, {name: vision}]
identity:
  workload: {audiences: [sts.amazonaws.com]}
  federations:
    - {name: aws-data, kind: aws, role_arn: "arn:aws:iam::123456789012:role/training"}
  secret_stores:
    - name: company-sm
      identity: aws-data
      region: eu-west-1
      teams: {nlp: ["prod/nlp/*", shared/hf-token], vision: [shared/hf-token]}
)", "estate.yaml");
  ASSERT_TRUE(estate.ok()) << estate.status().ToString();
  const SecretStore& store = estate->identity.secret_stores.at(0);
  EXPECT_EQ(store.Endpoint(), "https://secretsmanager.eu-west-1.amazonaws.com");
  auto check = [&](const std::string& yaml) {
    auto spec = ParseJobSpec("resources: {accelerators: H200:8}\n" + yaml, "job.yaml");
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    return spec.ok() ? CheckJobAgainstEstate(spec->spec, *estate, "job.yaml").message() : spec.status().message();
  };
  EXPECT_EQ(check("labels: {team: nlp}\nsecrets: {DB: \"aws-sm://prod/nlp/db#password\", HF: aws-sm://shared/hf-token}\n"), "");
  EXPECT_EQ(check("labels: {team: vision}\nsecrets: {HF: {from: aws-sm://shared/hf-token, as: file}}\n"), "");
  EXPECT_NE(check("labels: {team: vision}\nsecrets: {DB: \"aws-sm://prod/nlp/db#password\"}\n")
                .find("secrets.DB: team \"vision\" may not read aws-sm://prod/nlp/db#password"),
            std::string::npos);
  // A prefix is a prefix, not a pattern over the rest.
  EXPECT_NE(check("labels: {team: nlp}\nsecrets: {DB: aws-sm://prod/nlpx}\n").find("may not read"), std::string::npos);
  EXPECT_NE(check("labels: {team: nlp}\nsecrets: {S: \"k8s://c/ns/s#k\"}\n").find("no secret store for k8s://"),
            std::string::npos);

  auto parsed = ParseJobSpec("labels: {team: nlp}\nsecrets:\n  DB: \"aws-sm://prod/nlp/db#password\"\n"
                             "  CERT: {from: aws-sm://prod/nlp/tls, as: file}\n  TOKEN: s3cr3t-value\n",
                             "job.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->spec.secrets, (std::vector<std::string>{"CERT", "DB", "TOKEN"}));
  ASSERT_EQ(parsed->spec.secret_refs.size(), 2u);
  EXPECT_EQ(parsed->spec.secret_refs["DB"].name, "prod/nlp/db");
  EXPECT_EQ(parsed->spec.secret_refs["DB"].key, "password");
  EXPECT_FALSE(parsed->spec.secret_refs["DB"].as_file);
  EXPECT_TRUE(parsed->spec.secret_refs["CERT"].as_file);
  EXPECT_EQ(parsed->secret_values, (std::map<std::string, std::string>{{"TOKEN", "s3cr3t-value"}}));
  // The stored spec (JSON) keeps the references, as the scheduler reads them at launch.
  JobRecord record;
  record.id = "job_1";
  record.spec_json = ToJson(parsed->spec).dump();
  auto kept = StoredSpec(record);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  ASSERT_EQ(kept->secret_refs.size(), 2u);
  EXPECT_EQ(kept->secret_refs["DB"].reference, "aws-sm://prod/nlp/db#password");
  EXPECT_EQ(kept->secret_refs["DB"].key, "password");
  EXPECT_TRUE(kept->secret_refs["CERT"].as_file);
  EXPECT_EQ(record.spec_json.find("s3cr3t-value"), std::string::npos);
  // What is stored keeps the references and drops the value.
  std::string stored = WithoutSecretValues("labels: {team: nlp}\nsecrets:\n  DB: \"aws-sm://prod/nlp/db#password\"\n"
                                           "  TOKEN: s3cr3t-value\n");
  EXPECT_NE(stored.find("aws-sm://prod/nlp/db#password"), std::string::npos) << stored;
  EXPECT_EQ(stored.find("s3cr3t-value"), std::string::npos) << stored;
  // A value given at submission for a name the file reads by reference is refused.
  SpecInputs inputs;
  inputs.secrets["DB"] = "other";
  EXPECT_NE(ApplySpecInputs(*parsed, inputs, "job.yaml").message().find("DB is read from aws-sm://prod/nlp/db#password"),
            std::string::npos);

  // Malformed references say what is expected, with the field.
  for (auto [yaml, want] : std::vector<std::pair<std::string, std::string>>{
           {"secrets: {A: \"aws-sm://\"}\n", "expected aws-sm://NAME[#KEY]"},
           {"secrets: {A: \"aws-sm://x#\"}\n", "must be followed by the key"},
           {"secrets: {A: \"k8s://c/ns#k\"}\n", "expected k8s://CLUSTER/NAMESPACE/NAME#KEY"},
           {"secrets: {A: {from: aws-sm://x, as: disk}}\n", "expected env (the value in the variable) or file"},
           {"secrets: {A: {as: file}}\n", "needs from:"},
           {"secrets: {A: {from: plain}}\n", "expected a reference"}}) {
    auto bad = ParseJobSpec(yaml, "job.yaml");
    EXPECT_FALSE(bad.ok()) << yaml;
    EXPECT_NE(bad.status().ToString().find(want), std::string::npos) << yaml << bad.status().ToString();
    EXPECT_NE(bad.status().ToString().find("secrets.A"), std::string::npos) << bad.status().ToString();
  }
}

TEST(EstateTest, ChecksJobsAgainstTheEstate) {
  auto estate = providers::ParseEstate(DefaultEstateYaml(), "embedded");
  ASSERT_TRUE(estate.ok());
  auto check = [&](const char* yaml) {
    auto spec = ParseJobSpec(yaml, "job.yaml");
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    return CheckJobAgainstEstate(spec->spec, *estate, "job.yaml");
  };
  // Every problem is reported, not just the first.
  auto all = [&](const char* yaml) {
    std::string out;
    Status st = check(yaml);  // kept alive: the loop borrows its diagnostics
    for (const auto& d : st.diagnostics()) out += d.message + "\n";
    return out;
  };
  EXPECT_TRUE(check("resources: {accelerators: H200:8, infra: nebius/eu-north1}\nresidency: eu\nlabels: {team: nlp}\n").ok());
  EXPECT_NE(check("resources: {accelerators: H300:8}\n").message().find("did you mean \"H200\""), std::string::npos);
  EXPECT_NE(check("resources: {accelerators: L4:8}\n").message().find("on one node"), std::string::npos);
  // A V100 is not told "did you mean H100": hints stay within the family.
  EXPECT_EQ(check("resources: {accelerators: V100:8}\n").message().find("did you mean"), std::string::npos);
  EXPECT_NE(all("resources: {infra: nebuis}\n").find("did you mean \"nebius\""), std::string::npos);
  EXPECT_NE(all("resources: {infra: nebius/us-east1}\n").find("has no region"), std::string::npos);
  EXPECT_NE(all("residency: apac\n").find("residency zone"), std::string::npos);
  EXPECT_NE(all("labels: {team: nlpp}\n").find("did you mean \"nlp\""), std::string::npos);
  EXPECT_NE(all("datasets: [c5@1]\n").find("unknown dataset"), std::string::npos);
  EXPECT_NE(check("resources: {accelerators: L4:1}\n").message().find("names no team"), std::string::npos);
  // CPU-only work goes to the estate's CPU-only pools (32 CPUs per node).
  EXPECT_TRUE(check("run: x\nlabels: {team: nlp}\n").ok());
  EXPECT_TRUE(check("resources: {cpus: 32, memory: 128GB}\nlabels: {team: nlp}\n").ok());
  EXPECT_NE(check("resources: {cpus: 48+}\nlabels: {team: nlp}\n").message().find("no CPU-only pool has 48 CPUs on one node"),
            std::string::npos);
  // An estate without them says so.
  auto gpus_only = providers::ParseEstate(kBase, "estate.yaml");
  ASSERT_TRUE(gpus_only.ok());
  auto cpu_job = ParseJobSpec("run: x\n", "job.yaml");
  ASSERT_TRUE(cpu_job.ok());
  EXPECT_NE(CheckJobAgainstEstate(cpu_job->spec, *gpus_only, "job.yaml").message().find("no pool in the estate is CPU-only"),
            std::string::npos);
}

// A portable file names one alternative per cloud: the estate lacking some
// of them is a warning per alternative; lacking all of them is the error.
TEST(EstateTest, RefusesOnlyWhenNoAlternativeCanRun) {
  auto estate = providers::ParseEstate(DefaultEstateYaml(), "embedded");
  ASSERT_TRUE(estate.ok());
  auto check = [&](const char* yaml, std::vector<Diagnostic>& warnings) {
    auto spec = ParseJobSpec(yaml, "job.yaml");
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    return CheckJobAgainstEstate(spec->spec, *estate, "job.yaml", &warnings);
  };
  std::vector<Diagnostic> w;
  Status st = check("resources: {accelerators: {H200:8, MI300X:8}}\nlabels: {team: nlp}\n", w);
  EXPECT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(w[0].warning);
  EXPECT_NE(w[0].message.find("alternative MI300X:8: no cluster in the estate offers MI300X"), std::string::npos)
      << w[0].message;

  w.clear();
  st = check("resources:\n  accelerators: H200:8\n  any_of: [{infra: nebius}, {infra: azure/eastus}]\nlabels: {team: nlp}\n", w);
  EXPECT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].message.find("unknown provider \"azure\""), std::string::npos) << w[0].message;

  w.clear();
  st = check("resources: {accelerators: {MI300X:8, TPU-V5P:8}}\nlabels: {team: nlp}\n", w);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.diagnostics().size(), 2u);
  EXPECT_TRUE(w.empty());
}

}  // namespace
}  // namespace causeway
