// ProvenanceService's sealing: finished jobs' records signed once, stored,
// and read back byte for byte by Record and Export; running jobs' records
// signed on each read; a seal the database refuses is made on a later pass.
#include "service/provenance_service.h"

#include <set>

#include "causeway/ids.h"
#include "fakes/faulty_store.h"
#include "provenance/dsse.h"
#include "spec/spec_json.h"
#include "unit/service/service_fixture.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

class ProvenanceServiceTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    faulty_ = std::make_unique<FaultyStore>(*store_);
    queue_->Stop();
    queue_ = std::make_unique<CommitQueue>(*faulty_, CommitQueue::Options{});
    service_ = std::make_unique<ProvenanceService>(*faulty_, *queue_, *estate_, clock_,
                                                   provenance::Builder{"https://causeway.test", "test", "USD"});
  }

  // A job in `state` with one attempt (ended unless it runs), bound to
  // residency zone `residency` where one is given.
  std::string AddJob(JobState state, const std::string& residency = "") {
    JobRecord j;
    j.id = NewId("job", clock_.Now());
    j.name = "train";
    j.team = "nlp";
    j.owner = "alice";
    j.state = state;
    j.spec_yaml = "name: train\nrun: python train.py\n";
    JobSpec spec;
    spec.name = j.name;
    spec.team = j.team;
    spec.owner = j.owner;
    spec.run = "python train.py";
    spec.residency = residency;
    j.spec_json = ToJson(spec).dump();
    if (!residency.empty()) j.cluster = "nebius-eu-h100";  // where its artifacts are written from
    j.submitted_by = "tok_alice";
    j.created_at = j.updated_at = clock_.Now();
    j.attempts = 1;
    clock_.Advance(Micros(1000));
    Attempt a;
    a.job_id = j.id;
    a.number = 1;
    a.cluster = "nebius-eu-h100";
    a.state = state == JobState::kRunning ? "running" : std::string(JobStateName(state));
    a.started_at = j.created_at;
    if (state != JobState::kRunning) a.ended_at = j.created_at + std::chrono::minutes(5);
    EXPECT_TRUE(queue_
                    ->Run([j, a](WriteTx& tx) -> Status {
                      RETURN_IF_ERROR(tx.InsertJob(j));
                      RETURN_IF_ERROR(tx.UpdateJobProgress(j));
                      RETURN_IF_ERROR(tx.PutAttempt(a));
                      AuditEvent e;
                      e.time = j.created_at;
                      e.actor = j.submitted_by;
                      e.action = "job.submit";
                      e.resource = "job/" + j.id;
                      return tx.AppendAudit(e);
                    })
                    .ok());
    return j.id;
  }

  // The payload of `envelope` when it verifies with the published keys.
  Result<std::string> Verified(const std::string& envelope) {
    ASSIGN_OR_RETURN(json jwks, service_->PublicKeys());
    ASSIGN_OR_RETURN(auto keys, identity::jwt::KeySet::FromJwks(jwks));
    return provenance::Verify(json::parse(envelope), provenance::kInTotoPayloadType, keys);
  }

  std::unique_ptr<FaultyStore> faulty_;
  std::unique_ptr<ProvenanceService> service_;
};

// A job bound to a residency zone records artifacts only in storage its
// zone's clusters alone declare (as for checkpoints); one bound to none
// may keep them anywhere.
TEST_F(ProvenanceServiceTest, AZoneBoundJobsArtifactsOutsideItsZoneAreRefused) {
  for (Cluster& c : estate_->clusters) c.storage = std::vector<std::string>{c.zone == "eu" ? "s3://art-eu/" : "s3://art-us/"};
  std::string bound = AddJob(JobState::kRunning, "eu");
  auto artifact = [](const std::string& name, const std::string& uri) {
    return json::array({{{"name", name}, {"digest", "sha256:" + std::string(64, 'a')}, {"uri", uri}}});
  };
  auto in_zone = service_->RecordFacts(Admin(), bound, json(), artifact("model", "s3://art-eu/run/model.pt"));
  EXPECT_TRUE(in_zone.ok()) << in_zone.status().ToString();
  auto outside = service_->RecordFacts(Admin(), bound, json(), artifact("model2", "s3://art-us/run/model.pt"));
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(outside.status().message().find("artifacts[0].uri"), std::string::npos) << outside.status().message();
  EXPECT_NE(outside.status().message().find("bound to residency zone eu"), std::string::npos)
      << outside.status().message();
  EXPECT_EQ(Audit("job.record").size(), 1u) << "nothing refused was recorded";
  std::string free = AddJob(JobState::kRunning);
  EXPECT_TRUE(service_->RecordFacts(Admin(), free, json(), artifact("model", "s3://art-us/run/model.pt")).ok());
}

TEST_F(ProvenanceServiceTest, FinishedJobsAreSealedOnceAndReadBackByteForByte) {
  std::string running = AddJob(JobState::kRunning);
  std::string done = AddJob(JobState::kSucceeded);
  std::string cancelled = AddJob(JobState::kCancelled);

  // Before sealing, each read signs afresh (ECDSA's nonce is random).
  auto before = service_->Record(done);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_NE(*before, *service_->Record(done));

  auto sealed = service_->SealFinished(kSealBatch);
  ASSERT_TRUE(sealed.ok()) << sealed.status().ToString();
  EXPECT_EQ(*sealed, 2) << "the two finished jobs, not the running one";
  EXPECT_EQ(*service_->SealFinished(kSealBatch), 0) << "nothing is sealed twice";
  EXPECT_TRUE(store_->ListUnsealedJobs(10)->empty());

  auto stored = store_->GetSealedRecords({done, cancelled, running});
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->size(), 2u);
  std::set<std::string> envelopes;
  for (const SealedRecord& r : *stored) {
    EXPECT_EQ(r.kid.rfind("provenance-", 0), 0u) << r.kid;
    EXPECT_EQ(*service_->Record(r.job_id), r.envelope) << "read back as stored";
    envelopes.insert(r.envelope);
    auto payload = Verified(r.envelope);
    ASSERT_TRUE(payload.ok()) << payload.status().ToString();
    EXPECT_NE(payload->find(r.job_id), std::string::npos);
  }
  // The sealed record states what the live one states.
  EXPECT_EQ(*Verified(*before), *Verified(*service_->Record(done)));
  auto live = service_->Record(running);
  ASSERT_TRUE(live.ok());
  EXPECT_NE(*live, *service_->Record(running)) << "a running job's record is signed on each read";
  EXPECT_TRUE(Verified(*live).ok());

  // Export streams the stored envelopes and signs only the running job's.
  std::vector<std::string> lines;
  auto page = service_->Export(ProvenanceExport{}, [&](const std::string& line) {
    lines.push_back(line);
    return true;
  });
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(envelopes.count(lines[0]) + envelopes.count(lines[1]), 2u) << "newest first: the running job is the oldest";
  EXPECT_EQ(lines[0], *service_->Record(cancelled));
  EXPECT_EQ(envelopes.count(lines[2]), 0u);
  EXPECT_TRUE(Verified(lines[2]).ok());

  // A limit cuts the page and names the cursor; the next page goes on.
  ProvenanceExport first;
  first.limit = 2;
  std::vector<std::string> part;
  auto cut = service_->Export(first, [&](const std::string& line) {
    part.push_back(line);
    return true;
  });
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut->emitted, 2);
  EXPECT_EQ(cut->next, done);
  ProvenanceExport rest;
  rest.before_id = cut->next;
  auto tail = service_->Export(rest, [&](const std::string&) { return true; });
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->emitted, 1);
  EXPECT_EQ(tail->next, "");
}

TEST_F(ProvenanceServiceTest, ASealTheDatabaseRefusesIsMadeOnALaterPass) {
  std::string done = AddJob(JobState::kFailed);
  ASSERT_TRUE(service_->Record(done).ok());  // the key exists before the failure
  faulty_->FailCommits(Unavailable("the database went away"));
  auto refused = service_->SealFinished(kSealBatch);
  EXPECT_FALSE(refused.ok());
  faulty_->Heal();
  EXPECT_EQ(store_->ListUnsealedJobs(10)->size(), 1u) << "nothing was half-stored";
  faulty_->FailReads(Unavailable("the database went away"));
  EXPECT_FALSE(service_->SealFinished(kSealBatch).ok());
  faulty_->Heal();
  auto sealed = service_->SealAllFinished();
  ASSERT_TRUE(sealed.ok()) << sealed.status().ToString();
  EXPECT_EQ(*sealed, 1);
  EXPECT_EQ(store_->GetSealedRecords({done})->size(), 1u);
}

}  // namespace
}  // namespace causeway::testing
