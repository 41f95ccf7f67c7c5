// What an attempt becomes in a Kubernetes cluster and what the cluster's
// answers mean, without a cluster (the plane's tests: kubernetes_test.cc).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "provenance/probe.h"
#include "providers/kubernetes/kube_api.h"
#include "providers/kubernetes/kube_objects.h"
#include "providers/kubernetes/kube_people.h"
#include "providers/kubernetes/kube_settings.h"
#include "providers/registry.h"

namespace causeway::kube {
namespace {

using nlohmann::json;

LaunchRequest Request() {
  LaunchRequest r;
  r.job_id = "job_01JD3XQ0ABCDEFGHJKMNPQRSTV";
  r.attempt = 2;
  r.cluster = "k";
  r.gpus_per_node = 8;
  r.num_nodes = 1;
  r.env = {{"CAUSEWAY_TOKEN", "cw_secret"}, {"EPOCHS", "3"}};
  r.run = "python train.py";
  r.setup = "pip install -r requirements.txt";
  r.time_limit = Micros(std::chrono::hours(2));
  r.tags = {{"causeway-job", r.job_id}, {"causeway-team", "nlp"}, {"causeway-owner", "alice@example.com"},
            {"kwok-run-for", "5s"}, {"kueue.x-k8s.io/queue-name", "elsewhere"}, {"causeway-attempt", "9"}};
  return r;
}

KubeSettings Settings() {
  KubeSettings s;
  s.namespace_prefix = "team-";
  s.local_queue = "lq";
  return s;
}

TEST(KubeObjectsTest, NamesAreDnsLabelsShortEnoughForThePodsHostNames) {
  std::string name = ObjectName("job_01JD3XQ0ABCDEFGHJKMNPQRSTV", 12);
  EXPECT_EQ(name, "cw-job-01jd3xq0abcdefghjkmnpqrstv-12");
  std::string longest = ObjectName(std::string(200, 'X'), 123456);
  EXPECT_LE(longest.size(), 52u);
  EXPECT_EQ(longest.substr(longest.size() - 7), "-123456");
  EXPECT_EQ(LabelValue("alice@example.com"), "alice_example.com");
  EXPECT_EQ(LabelValue("-x-"), "x");
  EXPECT_LE(LabelValue(std::string(100, 'a')).size(), 63u);
}

TEST(KubeObjectsTest, AJobIsSuspendedQueuedForKueueNeverRetriedAndHoldsNoSecret) {
  LaunchRequest r = Request();
  json job = JobManifest(r, Settings(), "team-nlp", "lq");
  EXPECT_EQ(job["metadata"]["namespace"], "team-nlp");
  const json& labels = job["metadata"]["labels"];
  EXPECT_EQ(labels["kueue.x-k8s.io/queue-name"], "lq") << "a job's own label must not choose its queue";
  EXPECT_EQ(labels["causeway-attempt"], "2") << "a job's own label must not rename its attempt";
  EXPECT_EQ(labels["causeway-owner"], "alice_example.com");
  EXPECT_EQ(labels["kwok-run-for"], "5s");
  EXPECT_EQ(job["metadata"]["annotations"]["causeway.dev/owner"], "alice@example.com");
  const json& spec = job["spec"];
  EXPECT_EQ(spec["suspend"], true);
  EXPECT_EQ(spec["backoffLimit"], 0);
  EXPECT_EQ(spec["completionMode"], "Indexed");
  EXPECT_EQ(spec["activeDeadlineSeconds"], 7200);
  const json& container = spec["template"]["spec"]["containers"][0];
  EXPECT_EQ(container["image"], "ubuntu:22.04");
  EXPECT_EQ(container["resources"]["limits"]["nvidia.com/gpu"], "8");
  EXPECT_EQ(job.dump().find("cw_secret"), std::string::npos);
  EXPECT_EQ(container["envFrom"][0]["secretRef"]["name"], ObjectName(r.job_id, 2));
  EXPECT_EQ(spec["template"]["spec"]["automountServiceAccountToken"], false);
  // Without Kueue there is no queue label (Causeway resumes the Job itself).
  KubeSettings plain = Settings();
  plain.local_queue.clear();
  EXPECT_FALSE(plain.UsesKueue());
  json unqueued = JobManifest(r, plain, "team-nlp", "");
  EXPECT_FALSE(unqueued["metadata"]["labels"].contains("kueue.x-k8s.io/queue-name"));
  EXPECT_EQ(unqueued["spec"]["suspend"], true);
  // The job's priority, as the estate maps it to Kueue's classes; none
  // mapped (or no Kueue): no class, and Kueue's default priority.
  EXPECT_FALSE(labels.contains("kueue.x-k8s.io/priority-class"));
  KubeSettings ranked = Settings();
  ranked.priority_classes = {{"high", "prod"}};
  r.priority = 100;
  EXPECT_EQ(JobManifest(r, ranked, "team-nlp", "lq")["metadata"]["labels"]["kueue.x-k8s.io/priority-class"], "prod");
  r.priority = 50;
  EXPECT_FALSE(JobManifest(r, ranked, "team-nlp", "lq")["metadata"]["labels"].contains("kueue.x-k8s.io/priority-class"));
  r.tags["kueue.x-k8s.io/priority-class"] = "mine";
  r.priority = 100;
  EXPECT_EQ(JobManifest(r, ranked, "team-nlp", "lq")["metadata"]["labels"]["kueue.x-k8s.io/priority-class"], "prod")
      << "a job's own label must not choose its priority";

  json secret = SecretManifest(r, "team-nlp", "uid-1");
  EXPECT_EQ(secret["stringData"]["CAUSEWAY_TOKEN"], "cw_secret");
  EXPECT_EQ(secret["metadata"]["ownerReferences"][0]["uid"], "uid-1");
  EXPECT_EQ(secret["metadata"]["ownerReferences"][0]["kind"], "Job");
}

TEST(KubeObjectsTest, EachRankOfAGangKnowsItsRankAndTheHeadsAddress) {
  LaunchRequest r = Request();
  r.num_nodes = 3;
  std::string name = ObjectName(r.job_id, r.attempt);
  std::string script = PodScript(r, "team-nlp");
  EXPECT_NE(script.find("SKYPILOT_NODE_RANK=\"${JOB_COMPLETION_INDEX:-0}\""), std::string::npos);
  EXPECT_NE(script.find("'" + name + "-0." + name + ".team-nlp.svc\n" + name + "-1." + name + ".team-nlp.svc\n" + name +
                        "-2." + name + ".team-nlp.svc'"),
            std::string::npos)
      << script;
  EXPECT_LT(script.find("pip install"), script.find("python train.py"));
  json service = ServiceManifest(r, "team-nlp", "uid-1");
  EXPECT_EQ(service["spec"]["clusterIP"], "None");
  EXPECT_EQ(JobManifest(r, Settings(), "team-nlp", "lq")["spec"]["template"]["spec"]["subdomain"], name);
}

TEST(KubeObjectsTest, WhatKubernetesSaysBecomesAnOutcome) {
  JobView done = ViewOf(json::parse(R"({"spec": {"suspend": false}, "status": {"succeeded": 1,
      "startTime": "2026-12-06T10:00:00Z", "conditions": [{"type": "Complete", "status": "True"}]}})"));
  EXPECT_EQ(done.outcome, AttemptOutcome::kSucceeded);
  EXPECT_TRUE(done.started);
  ASSERT_TRUE(done.start_time);
  EXPECT_EQ(FormatRfc3339(*done.start_time), "2026-12-06T10:00:00.000000Z");
  JobView late = ViewOf(json::parse(R"({"status": {"failed": 1, "conditions": [
      {"type": "Failed", "status": "True", "reason": "DeadlineExceeded", "message": "Job was active longer"}]}})"));
  EXPECT_EQ(late.outcome, AttemptOutcome::kTimeout);
  JobView waiting = ViewOf(json::parse(R"({"spec": {"suspend": true}, "status": {}})"));
  EXPECT_FALSE(waiting.outcome);
  EXPECT_TRUE(waiting.suspended);
  EXPECT_FALSE(waiting.started);
  EXPECT_FALSE(ViewOf(json::parse("[1, 2]")).outcome) << "an answer of the wrong shape is no outcome";

  auto classify = [](const char* pods) {
    JobView v;
    v.outcome = AttemptOutcome::kFailed;
    ClassifyFromPods(json::parse(pods), v);
    return v;
  };
  JobView oom = classify(R"({"items": [{"metadata": {"name": "p0"}, "status": {"containerStatuses": [
      {"name": "main", "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]}}]})");
  EXPECT_EQ(oom.outcome, AttemptOutcome::kFailed);
  EXPECT_EQ(oom.exit_code, 137);
  EXPECT_NE(oom.reason.find("out of memory"), std::string::npos);
  JobView lost = classify(R"({"items": [{"metadata": {"name": "p0"}, "status": {"conditions": [
      {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager", "message": "node gone"}]}}]})");
  EXPECT_EQ(lost.outcome, AttemptOutcome::kNodeFailure);
  JobView pull = classify(R"({"items": [{"metadata": {"name": "p0"}, "status": {"containerStatuses": [
      {"name": "main", "image": "registry.example.com/x:1", "state": {"waiting": {"reason": "ErrImagePull",
       "message": "not found"}}}]}}]})");
  EXPECT_NE(pull.reason.find("the image registry.example.com/x:1 cannot be pulled"), std::string::npos) << pull.reason;
  JobView code = classify(R"({"items": [{"metadata": {"name": "p0"}, "status": {"containerStatuses": [
      {"name": "main", "state": {"terminated": {"exitCode": 3, "reason": "Error"}}}]}}]})");
  EXPECT_EQ(code.exit_code, 3);
}

TEST(KubeObjectsTest, KueuesOwnWordsSayWhyAJobWaitsOrWasEvicted) {
  json pending = json::parse(R"({"status": {"conditions": [{"type": "QuotaReserved", "status": "False",
      "reason": "Pending", "message": "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor h100, 8 more needed"}]}})");
  EXPECT_EQ(WaitingReason(pending),
            "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor h100, 8 more "
            "needed");
  EXPECT_EQ(EvictionReason(pending), "");
  json evicted = json::parse(R"({"status": {"conditions": [{"type": "QuotaReserved", "status": "True"},
      {"type": "Evicted", "status": "True", "reason": "Preempted", "message": "Preempted to accommodate a workload"}]}})");
  EXPECT_EQ(WaitingReason(evicted), "");
  EXPECT_EQ(EvictionReason(evicted), "evicted by Kueue: Preempted (Preempted to accommodate a workload)");
}

// Kueue's headroom, from objects as the v1beta2 API writes them: nominal
// quota less what is reserved, in flavors of the pool's GPU type, each
// ClusterQueue once however many LocalQueues point at it.
TEST(KubeObjectsTest, KueuesHeadroomIsNominalQuotaLessWhatIsReservedInFlavorsOfTheType) {
  KubeSettings s = Settings();
  auto cq = [](const std::string& quotas, const std::string& reserved) {
    return json::parse(R"({"metadata": {"name": "x"}, "spec": {"resourceGroups": [{"coveredResources": ["cpu",
        "nvidia.com/gpu"], "flavors": )" + quotas + R"(}]}, "status": {"flavorsReservation": )" + reserved + "}}");
  };
  std::map<std::string, json> queues = {
      {"team-cq", cq(R"([{"name": "h100", "resources": [{"name": "cpu", "nominalQuota": "64"},
                        {"name": "nvidia.com/gpu", "nominalQuota": "16"}]},
                       {"name": "a100", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "32"}]},
                       {"name": "any", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 4}]}])",
                     R"([{"name": "h100", "resources": [{"name": "cpu", "total": "1"},
                        {"name": "nvidia.com/gpu", "total": "8", "borrowed": "0"}]}])")},
      {"full-cq", cq(R"([{"name": "h100", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "8"}]}])",
                     R"([{"name": "h100", "resources": [{"name": "nvidia.com/gpu", "total": "12", "borrowed": "4"}]}])")},
      {"odd-cq", cq(R"([{"name": "h100", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "1.5"}]}])", "[]")},
  };
  std::map<std::string, json> flavors = {
      {"h100", json::parse(R"({"spec": {"nodeLabels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}}})")},
      {"a100", json::parse(R"({"spec": {"nodeLabels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}}})")},
      {"any", json::parse(R"({"spec": {}})")},
  };
  auto lq = [](const std::string& cluster_queue) { return json{{"spec", {{"clusterQueue", cluster_queue}}}}; };
  // h100: 16 - 8; "any" carries no product label, so it counts: 4. a100 is another type.
  EXPECT_EQ(KueueHeadroom({lq("team-cq")}, queues, flavors, s, "H100"), 12);
  EXPECT_EQ(KueueHeadroom({lq("team-cq"), lq("team-cq")}, queues, flavors, s, "H100"), 12);
  EXPECT_EQ(KueueHeadroom({lq("team-cq")}, queues, flavors, s, "A100"), 36);
  // Borrowed beyond its nominal quota: no headroom, never negative.
  EXPECT_EQ(KueueHeadroom({lq("full-cq")}, queues, flavors, s, "H100"), 0);
  EXPECT_EQ(KueueHeadroom({lq("team-cq"), lq("full-cq")}, queues, flavors, s, "H100"), 12);
  // A fraction of a GPU is no GPU; a missing ClusterQueue or flavor adds nothing.
  EXPECT_EQ(KueueHeadroom({lq("odd-cq"), lq("gone-cq")}, queues, flavors, s, "H100"), 0);
  EXPECT_EQ(KueueHeadroom({lq("team-cq")}, queues, {}, s, "H100"), 0);
  EXPECT_EQ(WholeQuantity("8"), 8);
  EXPECT_EQ(WholeQuantity("8k"), 0);
  EXPECT_EQ(WholeQuantity(-3), 0);
  EXPECT_EQ(WholeQuantity("1234567890"), 0);
}

TEST(KubeObjectsTest, ANodesFactsReadAsTheProbesDo) {
  json node = json::parse(R"({"metadata": {"name": "gpu-7", "labels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
      "nvidia.com/cuda.driver.major": "550", "nvidia.com/cuda.driver.minor": "54", "nvidia.com/cuda.driver.rev": "15",
      "nvidia.com/cuda.runtime-version.full": "12.4", "nvidia.com/gpu.memory": "81559"}},
      "status": {"allocatable": {"nvidia.com/gpu": "2"}, "nodeInfo": {"kernelVersion": "6.1.0",
      "osImage": "Ubuntu 22.04.4 LTS", "containerRuntimeVersion": "containerd://1.7.13"}}})");
  provenance::NodeFacts f = provenance::ParseProbe(NodeFacts(node, KubeSettings{}, "registry/x@sha256:ab"));
  EXPECT_EQ(f.name, "gpu-7");
  EXPECT_EQ(f.facts["kernel"].value, "6.1.0");
  EXPECT_EQ(f.facts["driver"].value, "550.54.15");
  EXPECT_EQ(f.facts["cuda"].value, "12.4");
  EXPECT_EQ(f.facts["container_runtime"].value, "containerd://1.7.13");
  EXPECT_EQ(f.facts["image"].value, "registry/x@sha256:ab");
  ASSERT_EQ(f.gpus.size(), 2u);
  EXPECT_EQ(f.gpus[1].model, "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(f.gpus[1].memory_mib, "81559");
  // A node without GPU feature discovery says what it lacks.
  provenance::NodeFacts bare = provenance::ParseProbe(NodeFacts(json::parse(R"({"metadata": {"name": "n"}})"),
                                                                KubeSettings{}, ""));
  EXPECT_FALSE(bare.facts["driver"].detected());
  EXPECT_NE(bare.facts["driver"].not_detected.find("feature discovery"), std::string::npos);
  EXPECT_FALSE(bare.facts["image"].detected());
}

TEST(KubeObjectsTest, ErrorAnswersBecomeTypedStatuses) {
  EXPECT_EQ(StatusOf(404, R"({"kind":"Status","message":"jobs.batch \"x\" not found","code":404})", "GET").code(),
            Code::kNotFound);
  EXPECT_EQ(StatusOf(409, "{}", "POST").code(), Code::kAlreadyExists);
  EXPECT_EQ(StatusOf(410, "{}", "watch").code(), Code::kFailedPrecondition);
  EXPECT_EQ(StatusOf(403, "{}", "GET").code(), Code::kPermissionDenied);
  EXPECT_EQ(StatusOf(503, "not json", "GET").code(), Code::kUnavailable);
  EXPECT_NE(StatusOf(404, R"({"message":"jobs.batch \"x\" not found"})", "GET /x").message().find("not found"),
            std::string::npos);
}

// The estate's kubernetes block: every credential from a file, exactly one.
TEST(KubeSettingsTest, TheClusterBlockIsCheckedWhereItIsWritten) {
  auto estate = [](const std::string& block, const std::string& more = "") {
    return providers::ParseEstate(
        "providers: [{name: k, kind: kubernetes, regions: [{name: r, zone: eu}]}]\n"
        "clusters:\n  - name: c\n    provider: k\n    region: r\n"
        "    node_pools: [{name: p, gpu_type: H100, gpus_per_node: 8, nodes: 1}]\n"
        "    kubernetes: {" + block + "}\n" + more,
        "estate.yaml");
  };
  auto good = estate("api_server: \"https://10.0.0.1:6443\", ca_file: /ca.crt, token_file: /t, namespace_prefix: team-");
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  const KubeSettings* s = SettingsAs<KubeSettings>(good->clusters[0]);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->gpu_resource, "nvidia.com/gpu");
  EXPECT_EQ(s->NamespaceFor("NLP Research"), "team-nlp-research");
  EXPECT_TRUE(good->clusters[0].honours.container_images);
  EXPECT_FALSE(s->UsesKueue());

  // A LocalQueue per Causeway queue, and one for the others.
  const std::string queues = "teams: [{name: nlp}, {name: cv}]\nqueues:\n"
                             "  - {name: nlp-gpu, team: nlp, quotas: [{flavor: H100, nominal: 8}]}\n"
                             "  - {name: vision, team: cv, quotas: [{flavor: H100, nominal: 8}]}\n";
  auto queued = estate("api_server: \"https://h:1\", ca_file: /c, token_file: /t, namespace: x, local_queue: lq, "
                       "local_queues: {nlp-gpu: nlp-lq, vision: vision-lq}", queues);
  ASSERT_TRUE(queued.ok()) << queued.status().ToString();
  s = SettingsAs<KubeSettings>(queued->clusters[0]);
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->UsesKueue());
  EXPECT_EQ(s->LocalQueueFor("nlp-gpu"), "nlp-lq");
  EXPECT_EQ(s->LocalQueueFor("vision"), "vision-lq");
  EXPECT_EQ(s->LocalQueueFor("other"), "lq");
  EXPECT_EQ(s->LocalQueueFor(""), "lq");

  // Causeway's priorities as Kueue's WorkloadPriorityClasses: a job takes
  // the class of the highest mapped priority at or below its own.
  auto ranked = estate("api_server: \"https://h:1\", ca_file: /c, token_file: /t, namespace: x, local_queue: lq, "
                       "priority_classes: {normal: team.default, high: prod, critical: urgent}");
  ASSERT_TRUE(ranked.ok()) << ranked.status().ToString();
  s = SettingsAs<KubeSettings>(ranked->clusters[0]);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->PriorityClassFor(10), "") << "low is mapped to nothing: Kueue's default";
  EXPECT_EQ(s->PriorityClassFor(50), "team.default");
  EXPECT_EQ(s->PriorityClassFor(75), "team.default") << "an integer priority takes the class below it";
  EXPECT_EQ(s->PriorityClassFor(100), "prod");
  EXPECT_EQ(s->PriorityClassFor(999), "prod");
  EXPECT_EQ(s->PriorityClassFor(1000), "urgent");

  struct Bad {
    std::string block, says;
  } bad[] = {
      {"api_server: \"https://h:1\", ca_file: /c, namespace: x", "exactly one credential"},
      {"api_server: \"https://h:1\", ca_file: /c, token_file: /t, client_cert: /c, client_key: /k, namespace: x",
       "exactly one credential"},
      {"api_server: \"https://h:1\", ca_file: /c, client_cert: /c, namespace: x", "needs both"},
      {"api_server: \"http://h:1\", ca_file: /c, token_file: /t, namespace: x", "https://"},
      {"api_server: \"https://h:1\", ca_file: /c, token_file: /t", "namespace"},
      {"api_server: \"https://h:1\", ca_file: /c, token_file: /t, namespace: Bad_NS", "namespace name"},
      {"api_server: \"https://h:1\", ca_file: /c, token_file: /t, namespace: x, token: abc", "token"},
      {"kubeconfig: /kc, token_file: /t, namespace: x", "leave out token_file"},
      // Every job must reach some LocalQueue, or Kueue would never see it.
      {"api_server: \"https://h:1\", ca_file: /c, token_file: /t, namespace: x, local_queues: {nlp: nlp-lq}",
       "local_queues needs local_queue"},
      {"api_server: \"https://h:1\", ca_file: /c, token_file: /t, namespace: x, local_queue: lq, "
       "local_queues: {nlp: Bad_LQ}",
       "LocalQueue of Causeway queue \"nlp\""},
      {"api_server: \"https://h:1\", ca_file: /c, token_file: /t, namespace: x, local_queue: lq, local_queues: [a]",
       "expected a mapping"},
      {"api_server: \"https://h:1\", ca_file: /c, token_file: /t, namespace: x, local_queue: lq, "
       "local_queues: {nlp: a, nlp: b}",
       "twice"},
      {"api_server: \"https://h:1\", ca_file: /c, token_file: /t, namespace: x, priority_classes: {high: prod}",
       "they need local_queue"},
      {"api_server: \"https://h:1\", ca_file: /c, token_file: /t, namespace: x, local_queue: lq, "
       "priority_classes: {urgent: prod}",
       "(low, normal, high, critical) as keys, not \"urgent\""},
      {"api_server: \"https://h:1\", ca_file: /c, token_file: /t, namespace: x, local_queue: lq, "
       "priority_classes: {high: Prod_Class}",
       "WorkloadPriorityClass of priority high"},
  };
  // A queue the estate does not have, refused where it is named.
  auto unknown = estate("api_server: \"https://h:1\", ca_file: /c, token_file: /t, namespace: x, local_queue: lq, "
                        "local_queues: {nlp-gpu: nlp-lq, speech: speech-lq}", queues);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().ToString().find("clusters[0].kubernetes.local_queues"), std::string::npos)
      << unknown.status().ToString();
  EXPECT_NE(unknown.status().ToString().find("names queue \"speech\", which is no queue of the estate (queues: nlp-gpu, vision)"),
            std::string::npos)
      << unknown.status().ToString();
  for (const Bad& b : bad) {
    auto r = estate(b.block);
    ASSERT_FALSE(r.ok()) << b.block;
    EXPECT_NE(r.status().ToString().find(b.says), std::string::npos) << b.block << "\n" << r.status().ToString();
  }
}

// People's roles in a cluster: read for every role but finance, and no
// role may create, change or delete a Job (submitting and stopping stay
// Causeway's: quota, policy, audit).
TEST(KubePeopleTest, RolesReadAndNobodySubmitsOrStopsAroundCauseway) {
  for (std::string_view role : kRoleNames) {
    json rules = KubeRoleRules(std::string(role));
    if (role == "finance") {
      EXPECT_TRUE(rules.empty()) << "finance has nothing to do inside a cluster";
      continue;
    }
    ASSERT_FALSE(rules.empty()) << role;
    bool reads_jobs = false, logs = false;
    for (const json& rule : rules) {
      for (const json& verb : rule["verbs"]) {
        EXPECT_NE(verb, "create") << role << ": " << rule.dump();
        EXPECT_NE(verb, "update") << role;
        EXPECT_NE(verb, "patch") << role;
        EXPECT_NE(verb, "delete") << role;
        EXPECT_NE(verb, "deletecollection") << role;
        EXPECT_NE(verb, "*") << role;
        if (rule["resources"].dump().find("\"jobs\"") != std::string::npos) reads_jobs |= verb == "list";
      }
      for (const json& r : rule["resources"]) logs |= r == "pods/log";
    }
    EXPECT_TRUE(reads_jobs) << role;
    EXPECT_EQ(logs, role != "viewer") << role;
  }
}

TEST(KubePeopleTest, GrantsBecomeBindingsInTeamNamespacesOrClusterWideForEveryTeam) {
  KubeSettings s = Settings();
  KubePeople people("kc", s, Endpoint{});
  EXPECT_EQ(people.NameOf("alice@example.com"), "oidc:alice@example.com");
  EXPECT_EQ(people.NameOf("bad name"), "") << "a name with a space is no user name";
  s.rbac_user_prefix = "";
  EXPECT_EQ(KubePeople("kc", s, Endpoint{}).NameOf("alice@example.com"), "alice@example.com");

  std::vector<providers::PersonGrant> grants = {
      {"researcher", "NLP", true}, {"viewer", "", false}, {"finance", "", false}, {"team-admin", "vision", true}};
  EXPECT_EQ(people.AccountsFor(grants), (std::set<std::string>{"researcher@team-nlp", "viewer@*", "team-admin@team-vision"}));

  json rb = BindingManifest("oidc:alice@example.com", "researcher", "team-nlp");
  EXPECT_EQ(rb["kind"], "RoleBinding");
  EXPECT_EQ(rb["metadata"]["namespace"], "team-nlp");
  EXPECT_EQ(rb["roleRef"]["name"], "causeway:researcher");
  EXPECT_EQ(rb["subjects"][0]["kind"], "User");
  EXPECT_EQ(rb["subjects"][0]["name"], "oidc:alice@example.com");
  EXPECT_EQ(rb["metadata"]["annotations"]["causeway.dev/user"], "oidc:alice@example.com");
  EXPECT_EQ(rb["metadata"]["labels"]["app.kubernetes.io/managed-by"], "causeway");
  const std::string person = rb["metadata"]["labels"]["causeway-person"];
  EXPECT_LE(person.size(), 63u) << "a label value";
  EXPECT_EQ(person.find('@'), std::string::npos);
  json crb = BindingManifest("oidc:alice@example.com", "viewer", "*");
  EXPECT_EQ(crb["kind"], "ClusterRoleBinding");
  EXPECT_FALSE(crb["metadata"].contains("namespace"));
  EXPECT_NE(BindingManifest("oidc:bob@example.com", "viewer", "*")["metadata"]["name"], crb["metadata"]["name"]);
  EXPECT_EQ(ClusterRoleManifest("researcher")["metadata"]["name"], "causeway:researcher");
}

}  // namespace
}  // namespace causeway::kube
