// DatasetService without rclone: versions registered from manifests,
// references resolved, jobs' datasets checked at submission, routing's view
// of the registry, and the refusals that come before any copy. Listing and
// copying with rclone are tested against real S3 servers
// (tests/integration/datasets_test.cc).
#include "service/dataset_service.h"

#include "cost/showback.h"
#include "data/manifest.h"
#include "unit/service/service_fixture.h"

namespace causeway::testing {
namespace {

std::string Manifest(int objects, char hash) {
  std::string text = "causeway-manifest 1 md5\n";
  for (int i = 0; i < objects; ++i) text += std::string(32, hash) + " 100 train/s" + std::to_string(i) + "\n";
  return text;
}

class DatasetServiceTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    std::string yaml(DefaultEstateYaml());
    size_t at = yaml.find("\ndatasets:\n");
    ASSERT_NE(at, std::string::npos);
    yaml.insert(at + 11, "  - {name: patients, owner: vision, residency: eu}\n");
    yaml += "\ndata:\n  locations:\n"
            "    - {name: nebius-eu, provider: nebius, region: eu-north1, remote: \"eu:d\", url: \"s3://eu-d\", "
            "storage_per_gb_month: 0.02}\n"
            "    - {name: cw-us, provider: coreweave, region: us-east-04, remote: \"us:d\"}\n";
    auto e = providers::ParseEstate(yaml, "estate.yaml");
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    estate_ = std::make_unique<Estate>(std::move(*e));
    data::RcloneSettings rclone;
    rclone.binary = "/nonexistent/rclone";
    service_ = std::make_unique<DatasetService>(*store_, *queue_, *estate_, clock_, rclone);
  }
  Result<DatasetVersion> Register(const std::string& name, const std::string& version, const std::string& manifest) {
    RegisterDataset r;
    r.name = name;
    r.version = version;
    r.manifest = manifest;
    return service_->Register(Admin(), r);
  }
  std::unique_ptr<DatasetService> service_;
};

TEST_F(DatasetServiceTest, VersionsAreRegisteredOnceAndResolvedByLabelDigestOrLatest) {
  auto v1 = Register("c4", "2024-05", Manifest(3, 'a'));
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_EQ(v1->digest, data::ManifestDigest(Manifest(3, 'a')));
  EXPECT_EQ(v1->objects, 3);
  EXPECT_EQ(v1->bytes, 300);
  EXPECT_EQ(v1->source, "manifest");
  EXPECT_EQ(Register("c4", "2024-05", Manifest(4, 'b')).status().code(), Code::kAlreadyExists);
  EXPECT_EQ(Register("c4", "again", Manifest(3, 'a')).status().code(), Code::kAlreadyExists);
  EXPECT_EQ(Register("nope", "v1", Manifest(1, 'a')).status().code(), Code::kNotFound);
  EXPECT_EQ(Register("c4", "../x", Manifest(1, 'c')).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Register("c4", "v9", "causeway-manifest 1 md5\n").status().code(), Code::kInvalidArgument);
  clock_.Advance(std::chrono::minutes(1));
  auto v2 = Register("c4", "", Manifest(4, 'b'));  // labelled v<N>
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_EQ(v2->version, "v2");

  EXPECT_EQ(service_->Resolve(DatasetRef{"c4", "2024-05", ""})->digest, v1->digest);
  EXPECT_EQ(service_->Resolve(DatasetRef{"c4", "", v1->digest})->version, "2024-05");
  EXPECT_EQ(service_->Resolve(DatasetRef{"c4", "", ""})->version, "v2");
  auto unknown = service_->Resolve(DatasetRef{"c4", "1999", ""});
  EXPECT_EQ(unknown.status().code(), Code::kNotFound);
  EXPECT_NE(unknown.status().message().find("registered: 2024-05, v2"), std::string::npos) << unknown.status().message();
  EXPECT_EQ(service_->Resolve(DatasetRef{"c4", "2024-05", v2->digest}).status().code(), Code::kNotFound);

  EXPECT_EQ(DatasetService::ParseRef("c4@" + v1->digest)->digest, v1->digest);
  EXPECT_EQ(DatasetService::ParseRef("c4@2024-05")->version, "2024-05");
  EXPECT_EQ(DatasetService::ParseRef("c4@sha256:12").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(DatasetService::ParseRef("@v1").status().code(), Code::kInvalidArgument);

  // Routing knows the version, with no verified replica anywhere yet (a
  // manifest is not a copy).
  auto place = service_->Verified(v1->digest);
  ASSERT_TRUE(place);
  EXPECT_TRUE(place->places.empty());
  EXPECT_EQ(place->bytes, 300);
  EXPECT_FALSE(service_->Verified("sha256:unknown"));
  EXPECT_EQ(Audit("dataset.register").size(), 2u);
}

TEST_F(DatasetServiceTest, AJobsDatasetsAreCheckedAndPinnedToTheirDigest) {
  auto v1 = Register("c4", "2024-05", Manifest(2, 'a'));
  ASSERT_TRUE(v1.ok());
  JobSpec spec;
  spec.datasets = {DatasetRef{"c4", "2024-05", ""}, DatasetRef{"imagenet", "2012", ""}};
  std::vector<Diagnostic> warnings;
  ASSERT_TRUE(service_->CheckJob(spec, "job.yaml", warnings).ok());
  EXPECT_EQ(spec.datasets[0].digest, v1->digest);  // the job's provenance carries it
  ASSERT_EQ(warnings.size(), 1u);                   // imagenet has no registered version
  EXPECT_EQ(warnings[0].field, "datasets[1]");
  EXPECT_TRUE(warnings[0].warning);

  JobSpec wrong;
  wrong.datasets = {DatasetRef{"c4", "1999", ""}};
  Status st = service_->CheckJob(wrong, "job.yaml", warnings);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  ASSERT_EQ(st.diagnostics().size(), 1u);
  EXPECT_EQ(st.diagnostics()[0].field, "datasets[0]");

  ASSERT_TRUE(Register("patients", "v1", Manifest(1, 'c')).ok());
  JobSpec unbound;
  unbound.datasets = {DatasetRef{"patients", "v1", ""}};
  EXPECT_EQ(service_->CheckJob(unbound, "job.yaml", warnings).code(), Code::kPolicyViolation);
  unbound.residency = "eu";
  EXPECT_TRUE(service_->CheckJob(unbound, "job.yaml", warnings).ok());
}

TEST_F(DatasetServiceTest, ReplicationIsRefusedOutOfZoneAndWithoutAVerifiedSource) {
  ASSERT_TRUE(Register("patients", "v1", Manifest(1, 'c')).ok());
  ASSERT_TRUE(Register("c4", "v1", Manifest(1, 'd')).ok());
  ReplicationOptions o;
  auto out_of_zone = service_->Replicate(Admin(), DatasetRef{"patients", "v1", ""}, "cw-us", o);
  EXPECT_EQ(out_of_zone.status().code(), Code::kPolicyViolation);
  EXPECT_NE(out_of_zone.status().message().find("never copied"), std::string::npos);
  auto no_source = service_->Replicate(Admin(), DatasetRef{"c4", "v1", ""}, "coreweave/us-east-04", o);
  EXPECT_EQ(no_source.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(service_->Replicate(Admin(), DatasetRef{"c4", "v1", ""}, "mars", o).status().code(), Code::kNotFound);
  o.bwlimit = "10M; rm -rf /";
  EXPECT_EQ(service_->Replicate(Admin(), DatasetRef{"c4", "v1", ""}, "cw-us", o).status().code(),
            Code::kInvalidArgument);
  // Nothing was started, so nothing was recorded.
  EXPECT_TRUE(Audit("dataset.replicate").empty());
  EXPECT_TRUE(store_->ListDatasetReplicas("")->empty());
}

TEST_F(DatasetServiceTest, AReplicasStorageIsChargedToItsOwnerByTheDayFromItsFirstVerification) {
  // 10 GB of patients (owned by vision), verified in nebius-eu (0.02 USD a
  // GB-month) at 10:00 on the first day.
  std::string text = "causeway-manifest 1 md5\n" + std::string(32, 'e') + " 5000000000 a\n" + std::string(32, 'f') +
                     " 5000000000 b\n";
  auto v = Register("patients", "v1", text);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  clock_.Advance(std::chrono::hours(10));
  const Timestamp verified = clock_.Now();
  DatasetReplica r{v->digest, "nebius-eu", "patients/v1", "verified", 0, "", verified, verified, verified};
  ASSERT_TRUE(queue_->Run([&](WriteTx& tx) -> Status {
                      RETURN_IF_ERROR(tx.PutDatasetReplica(r));
                      AuditEvent e;
                      e.time = verified;
                      e.actor = "test";
                      e.action = "dataset.replicate";
                      e.resource = "dataset/patients@v1";
                      return tx.AppendAudit(e);
                    })
                  .ok());
  auto charges = [&] { return *store_->ListDataCharges("", FromUnixMicros(0), FromUnixMicros(INT64_MAX)); };

  ASSERT_TRUE(service_->Refresh().ok());  // the day has not ended
  EXPECT_TRUE(charges().empty());
  EXPECT_TRUE(Audit("dataset.storage").empty());

  clock_.Advance(std::chrono::hours(14 + 24 + 1));  // 01:00 on the third day
  ASSERT_TRUE(service_->Refresh().ok());
  auto c = charges();
  ASSERT_EQ(c.size(), 2u);
  // 14 hours of the first day: 10 GB * 0.02 * 14/730; then a whole day.
  EXPECT_EQ(c[0].kind, "storage");
  EXPECT_EQ(c[0].team, "vision");
  EXPECT_EQ(c[0].job_id, "");
  EXPECT_EQ(c[0].at, verified);
  EXPECT_EQ(c[0].to_place, "nebius/eu-north1");
  EXPECT_EQ(c[0].bytes, 10'000'000'000);
  EXPECT_EQ(c[0].amount_micros, 3'836);
  EXPECT_EQ(c[1].at, verified + std::chrono::hours(14));
  EXPECT_EQ(c[1].amount_micros, 6'575);
  EXPECT_EQ(store_->ListDatasetReplicas(v->digest)->at(0).charged_until, verified + std::chrono::hours(38));
  ASSERT_EQ(Audit("dataset.storage").size(), 1u);
  EXPECT_EQ(Audit("dataset.storage")[0].details["charges"], 2);

  // Each day once: again, or from another server on the same store.
  ASSERT_TRUE(service_->Refresh().ok());
  data::RcloneSettings none;
  none.binary = "/nonexistent/rclone";
  DatasetService other(*store_, *queue_, *estate_, clock_, none);
  ASSERT_TRUE(other.Refresh().ok());
  EXPECT_EQ(charges().size(), 2u);
  EXPECT_EQ(Audit("dataset.storage").size(), 1u);

  // Showback puts it on the owner's line, beside what moving data cost.
  cost::ShowbackRequest req;
  req.by = "team";
  auto showback = cost::RunMeteredShowback(*store_, *estate_, req, clock_.Now());
  ASSERT_TRUE(showback.ok()) << showback.status().ToString();
  ASSERT_EQ(showback->lines.size(), 1u);
  EXPECT_EQ(showback->lines[0].keys, std::vector<std::string>{"vision"});
  EXPECT_EQ(showback->lines[0].storage_micros, 3'836 + 6'575);
  EXPECT_EQ(showback->lines[0].data_micros, 0);
  EXPECT_EQ(cost::ToJson(*showback)["rows"][0]["storage_cost"], "0.010411");
  EXPECT_EQ(cost::ToJson(*showback)["rows"][0]["total_cost"], "0.010411");
}

}  // namespace
}  // namespace causeway::testing
