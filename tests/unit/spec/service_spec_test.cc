// The `service:` section read on its own (spec/service_spec.h): SkyPilot's
// defaults where a field is absent, every problem with its line and field,
// and a `post_data` mapping's nesting bounded before it is walked. What
// SkyPilot itself makes of the same sections is checked against its own
// parser in skypilot_oracle_test.cc.
#include "spec/service_spec.h"

#include "causeway/job_spec.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace causeway::spec {
namespace {

TEST(ServiceSpecTest, AFileWithoutAServiceHasNone) {
  auto r = ParseServiceSection("run: echo\n", "task.yaml");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->has_value());
}

TEST(ServiceSpecTest, AbsentFieldsTakeSkyPilotsDefaults) {
  auto r = ParseServiceSection("service:\n  replicas: 2\n", "task.yaml");
  ASSERT_TRUE(r.ok() && r->has_value()) << r.status().ToString();
  const ServiceSpec& s = **r;
  EXPECT_EQ(s.readiness.path, "/");
  EXPECT_EQ(s.readiness.initial_delay_seconds, 1200);
  EXPECT_EQ(s.readiness.timeout_seconds, 15);
  EXPECT_EQ(s.readiness.interval_seconds, 10);
  EXPECT_FALSE(s.readiness.post_data.has_value()) << "a GET";
  EXPECT_EQ(s.replicas.min_replicas, 2);
  EXPECT_FALSE(s.replicas.max_replicas.has_value());
  EXPECT_EQ(s.load_balancing_policy, "least_load");
  EXPECT_EQ(s.stream_timeout_seconds, 120);
  EXPECT_FALSE(s.port.has_value());
}

TEST(ServiceSpecTest, ProblemsNameTheirLineAndField) {
  auto r = ParseServiceSection(
      "run: echo\n"
      "service:\n"
      "  readiness_probe: {path: /ready, timeout_seconds: soon}\n"
      "  replica_policy:\n"
      "    min_replicas: 1\n"
      "    max_replicas: 4\n"
      "    target_qps_per_replica: {l4: 2}\n",
      "svc.yaml");
  ASSERT_FALSE(r.ok());
  const auto& d = r.status().diagnostics();
  ASSERT_GE(d.size(), 2u) << r.status().ToString();
  EXPECT_EQ(d[0].field, "service.readiness_probe.timeout_seconds");
  EXPECT_EQ(d[0].line, 3);
  EXPECT_NE(d[0].message.find("expected a number"), std::string::npos) << d[0].message;
  EXPECT_EQ(d[1].field, "service.replica_policy.target_qps_per_replica");
  EXPECT_EQ(d[1].line, 7);
  EXPECT_NE(d[1].message.find("upper case"), std::string::npos) << d[1].message;
}

TEST(ServiceSpecTest, APostDataMappingIsTheJsonBodyAndItsNestingIsBounded) {
  auto r = ParseServiceSection(
      "service:\n  readiness_probe:\n    path: /v1/completions\n"
      "    post_data: {prompt: hi, max_tokens: 1, stream: false, stop: [\"\\n\"], tag: \"42\"}\n",
      "svc.yaml");
  ASSERT_TRUE(r.ok() && r->has_value()) << r.status().ToString();
  EXPECT_EQ(nlohmann::json::parse(*(*r)->readiness.post_data),
            (nlohmann::json{{"prompt", "hi"}, {"max_tokens", 1}, {"stream", false}, {"stop", {"\n"}}, {"tag", "42"}}));

  std::string deep = "service:\n  readiness_probe:\n    path: /\n    post_data: ";
  for (int i = 0; i < 40; ++i) deep += "{a: ";
  deep += "1";
  for (int i = 0; i < 40; ++i) deep += "}";
  auto refused = ParseServiceSection(deep + "\n", "svc.yaml");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().ToString().find("nests deeper than 32 levels"), std::string::npos)
      << refused.status().ToString();
}

TEST(ServiceSpecTest, AJobSpecWithABadServiceIsRefusedWhereItIsRead) {
  // The job spec's own parser reads the section the same way.
  auto r = ParseJobSpec("service:\n  replicas: 2\n  replica_policy: {min_replicas: 1}\nrun: echo\n", "task.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("give `replicas` or `replica_policy`, not both"), std::string::npos)
      << r.status().ToString();
}

}  // namespace
}  // namespace causeway::spec
