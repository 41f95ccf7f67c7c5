#include <gtest/gtest.h>

#include "causeway/estate.h"
#include "causeway/job_spec.h"
#include "fakes/fake_fetcher.h"
#include "providers/registry.h"
#include "secrets/aws.h"
#include "secrets/broker.h"

namespace causeway::secrets {
namespace {

// A POST to Secrets Manager with a session token, signed by botocore
// 1.40.18's SigV4Auth at 2026-12-07T10:00:00Z: the reference
// implementation's signature, not ours.
constexpr const char* kBotocorePost =
    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261207/eu-west-1/secretsmanager/aws4_request, "
    "SignedHeaders=content-type;host;x-amz-date;x-amz-security-token;x-amz-target, "
    "Signature=181c128fd77aa2cb0c85d0f9a5fdf2952ef23a66e096c7751e564cab9d5c006a";

// AWS's published Signature Version 4 test suite, "get-vanilla", and the
// POST above.
TEST(SigV4Test, SignsAsAwsAndBotocoreDo) {
  AwsCredentials creds;
  creds.access_key_id = "AKIDEXAMPLE";
  creds.secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
  AwsRequest get;
  get.method = "GET";
  get.host = "example.amazonaws.com";
  auto at = ParseRfc3339("2015-08-30T12:36:00Z");
  ASSERT_TRUE(at.ok());
  auto headers = SignV4(get, creds, "us-east-1", "service", *at);
  std::map<std::string, std::string> h(headers.begin(), headers.end());
  EXPECT_EQ(h["Authorization"],
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            "SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  EXPECT_EQ(h["X-Amz-Date"], "20150830T123600Z");
  EXPECT_EQ(h.count("X-Amz-Security-Token"), 0u);

  creds.session_token = "FQoGZXIvYXdzEXAMPLE";
  AwsRequest post;
  post.host = "127.0.0.1:5000";
  post.headers = {{"content-type", "application/x-amz-json-1.1"}, {"x-amz-target", "secretsmanager.GetSecretValue"}};
  post.body = R"({"SecretId":"prod/db"})";
  auto at2 = ParseRfc3339("2026-12-07T10:00:00Z");
  ASSERT_TRUE(at2.ok());
  headers = SignV4(post, creds, "eu-west-1", "secretsmanager", *at2);
  h = std::map<std::string, std::string>(headers.begin(), headers.end());
  EXPECT_EQ(h["Authorization"], kBotocorePost);
  EXPECT_EQ(h["X-Amz-Security-Token"], "FQoGZXIvYXdzEXAMPLE");
}

constexpr const char* kEstate = R"(providers: [{name: n, kind: sim, regions: [{name: r, zone: eu}]}]
clusters: [{name: c, provider: n, region: r, node_pools: [{name: p, gpu_type: H100, gpus_per_node: 8, nodes: 1}]}]
teams: [{name: nlp}]
identity:
  workload: {audiences: [sts.amazonaws.com]}
  federations:
    - {name: aws-data, kind: aws, role_arn: "arn:aws:iam::123456789012:role/training", sts_endpoint: "http://sts.test"}
  secret_stores:
    - {name: company-sm, identity: aws-data, region: eu-west-1, endpoint: "http://sm.test", teams: {nlp: ["prod/*"]}}
)";

constexpr const char* kAssumed = R"(<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>
<AccessKeyId>ASIATEST</AccessKeyId><SecretAccessKey>sak-test</SecretAccessKey><SessionToken>st-test</SessionToken>
<Expiration>2026-12-07T11:00:00Z</Expiration></Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>)";

// For one attempt: the role assumed once with the attempt's own token, each
// secret read once however many keys are taken of it, each read recorded
// with a keyed digest and no value; a failure names the reference and what
// AWS said, and the attempt gets none of its secrets.
TEST(BrokerTest, ReadsEachSecretOnceWithTheAttemptsOwnIdentity) {
  auto estate = providers::ParseEstate(kEstate, "estate.yaml");
  ASSERT_TRUE(estate.ok()) << estate.status().ToString();
  auto spec = ParseJobSpec("labels: {team: nlp}\nsecrets:\n  USER: \"aws-sm://prod/db#username\"\n"
                           "  PASS: \"aws-sm://prod/db#password\"\n  PORT: \"aws-sm://prod/db#port\"\nrun: x\n", "j");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  testing::FakeFetcher net;
  net.Answer("http://sts.test/", 200, kAssumed);
  net.Answer("http://sm.test/", 200, R"({"Name":"prod/db","SecretString":"{\"username\":\"app\",\"password\":\"hunter2\",\"port\":5432}"})");
  std::vector<std::string> minted;
  Broker broker(estate->identity, net, [](std::string_view v) { return "mac(" + std::string(v) + ")"; });
  auto mint = [&](const std::string& audience) -> Result<std::string> {
    minted.push_back(audience);
    return std::string("jwt-of-attempt");
  };
  Fetched got = broker.Fetch(spec->spec, "job_1", 3, mint, Timestamp());
  ASSERT_TRUE(got.status.ok()) << got.status.ToString();
  EXPECT_EQ(got.values, (std::map<std::string, std::string>{{"PASS", "hunter2"}, {"PORT", "5432"}, {"USER", "app"}}));
  EXPECT_EQ(minted, std::vector<std::string>{"sts.amazonaws.com"});
  auto requests = net.requests();
  ASSERT_EQ(requests.size(), 2u) << "one role session, one read";
  EXPECT_NE(requests[0].body.find("RoleSessionName=causeway-job_1-3"), std::string::npos);
  EXPECT_NE(requests[0].body.find("WebIdentityToken=jwt-of-attempt"), std::string::npos);
  EXPECT_NE(requests[0].body.find("RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Ftraining"), std::string::npos);
  std::map<std::string, std::string> h(requests[1].headers.begin(), requests[1].headers.end());
  EXPECT_EQ(h["X-Amz-Target"], "secretsmanager.GetSecretValue");
  EXPECT_EQ(h["X-Amz-Security-Token"], "st-test");
  EXPECT_EQ(h["Authorization"].rfind("AWS4-HMAC-SHA256 Credential=ASIATEST/19700101/eu-west-1/secretsmanager/aws4_request", 0), 0u)
      << h["Authorization"];
  ASSERT_EQ(got.reads.size(), 3u);
  for (const SecretRead& r : got.reads) {
    EXPECT_TRUE(r.ok);
    EXPECT_EQ(r.store, "company-sm");
    EXPECT_EQ(r.outcome, "delivered");
  }
  EXPECT_EQ(got.reads[0].var, "PASS");
  EXPECT_EQ(got.reads[0].digest, "hmac-sha256:mac(hunter2)");

  // A key the secret lacks, then AWS refusing: named, with no value.
  auto missing = ParseJobSpec("labels: {team: nlp}\nsecrets: {A: \"aws-sm://prod/db#nope\", B: aws-sm://prod/other}\nrun: x\n", "j");
  got = broker.Fetch(missing->spec, "job_1", 1, mint, Timestamp());
  EXPECT_FALSE(got.status.ok());
  EXPECT_NE(got.status.message().find("secret A (aws-sm://prod/db#nope)"), std::string::npos) << got.status.ToString();
  EXPECT_NE(got.status.message().find("has no key \"nope\""), std::string::npos);
  EXPECT_EQ(got.status.message().find("hunter2"), std::string::npos);
  EXPECT_TRUE(got.values.empty());
  ASSERT_EQ(got.reads.size(), 2u);
  EXPECT_FALSE(got.reads[1].ok);
  EXPECT_NE(got.reads[1].outcome.find("not read"), std::string::npos);

  net.Answer("http://sm.test/", 400, R"({"__type":"AccessDeniedException","Message":"not authorized to perform GetSecretValue"})");
  got = broker.Fetch(spec->spec, "job_1", 4, mint, Timestamp());
  EXPECT_NE(got.status.message().find("HTTP 400 AccessDeniedException: not authorized"), std::string::npos)
      << got.status.ToString();
  net.Answer("http://sts.test/", 403, "<ErrorResponse><Error><Code>AccessDenied</Code><Message>Not authorized to perform "
                                      "sts:AssumeRoleWithWebIdentity</Message></Error></ErrorResponse>");
  got = broker.Fetch(spec->spec, "job_1", 5, mint, Timestamp());
  EXPECT_NE(got.status.message().find("assuming arn:aws:iam::123456789012:role/training at sts.test: HTTP 403 AccessDenied"),
            std::string::npos)
      << got.status.ToString();
  EXPECT_EQ(got.status.message().find("jwt-of-attempt"), std::string::npos);
}

// k8s:// references: the attempt's token for the cluster's audience is the
// bearer credential, sent to the identity's API server trusting its CA; a
// Secret is read once for all its keys, each decoded; the API server's
// refusal is named.
TEST(BrokerTest, ReadsAKubernetesSecretWithTheAttemptsTokenAsItsBearer) {
  auto estate = providers::ParseEstate(R"(providers: [{name: n, kind: sim, regions: [{name: r, zone: eu}]}]
clusters: [{name: c, provider: n, region: r, node_pools: [{name: p, gpu_type: H100, gpus_per_node: 8, nodes: 1}]}]
teams: [{name: nlp}]
identity:
  workload: {audiences: [plane]}
  federations:
    - {name: plane-nlp, kind: kubernetes, audience: plane, api_server: "https://127.0.0.1:6443", ca_file: /etc/plane/ca.crt}
  secret_stores:
    - {name: plane-secrets, kind: kubernetes, identity: plane-nlp, cluster: plane, teams: {nlp: ["team-nlp/*"]}}
)", "estate.yaml");
  ASSERT_TRUE(estate.ok()) << estate.status().ToString();
  auto spec = ParseJobSpec("labels: {team: nlp}\nsecrets:\n  U: \"k8s://plane/team-nlp/db#user\"\n"
                           "  P: \"k8s://plane/team-nlp/db#password\"\nrun: x\n", "j");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  std::vector<std::pair<net::ApiRequest, net::TlsTrust>> sent;
  net::HttpResult answer{200, R"({"kind":"Secret","data":{"user":"YXBw","password":"aHVudGVyMg=="}})", {}};
  testing::FakeFetcher unused;
  Broker broker(estate->identity, unused, nullptr,
                [&](const net::ApiRequest& r, const net::TlsTrust& t) -> Result<net::HttpResult> {
                  sent.emplace_back(r, t);
                  return answer;
                });
  std::vector<std::string> minted;
  auto mint = [&](const std::string& audience) -> Result<std::string> {
    minted.push_back(audience);
    return std::string("jwt-of-attempt");
  };
  Fetched got = broker.Fetch(spec->spec, "job_1", 1, mint, Timestamp());
  ASSERT_TRUE(got.status.ok()) << got.status.ToString();
  EXPECT_EQ(got.values, (std::map<std::string, std::string>{{"P", "hunter2"}, {"U", "app"}}));
  EXPECT_EQ(minted, std::vector<std::string>{"plane"});
  ASSERT_EQ(sent.size(), 1u) << "one read of the Secret for both keys";
  EXPECT_EQ(sent[0].first.url, "https://127.0.0.1:6443/api/v1/namespaces/team-nlp/secrets/db");
  EXPECT_EQ(sent[0].second.ca_file, "/etc/plane/ca.crt");
  EXPECT_EQ(got.reads.at(0).store, "plane-secrets");

  answer = net::HttpResult{403, R"({"kind":"Status","message":"secrets \"db\" is forbidden: User \"causeway:job:job_1\" cannot get resource"})", {}};
  got = broker.Fetch(spec->spec, "job_1", 2, mint, Timestamp());
  EXPECT_NE(got.status.message().find("reading Secret team-nlp/db from https://127.0.0.1:6443: HTTP 403: secrets \"db\" is forbidden"),
            std::string::npos)
      << got.status.ToString();
  EXPECT_TRUE(got.values.empty());
}

}  // namespace
}  // namespace causeway::secrets
