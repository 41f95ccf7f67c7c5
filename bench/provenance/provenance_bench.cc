// bench/provenance: the two hot paths of provenance records (issue 19).
//  1. Building and signing the record of one 10-attempt job (each attempt
//     with an 8-GPU node's probe facts, a checkpoint, the job's own facts):
//     BuildStatement, its JSON, the DSSE signature. Target: under 10 ms.
//  2. Exporting the records of N finished jobs (default 100,000) from a
//     SQLite file, streamed as `causeway provenance export` gets them: each
//     job's record as sealed when it ended, one line out. Target: at least
//     10,000 records/s on one core (it runs on one thread). Beside it, what
//     the records cost before that: sealing them (signed once, at the end
//     of each job, by the server in the background) and exporting records
//     not sealed yet (a running job's, signed on export), both per second.
// Each figure is printed beside its target, as a ratio (target / measured
// time for 1, measured / target rate for 2: above 1 meets it). One JSON line.
//   provenance_bench [JOBS] [DIR]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>

#include "causeway/clock.h"
#include "causeway/crypto.h"
#include "causeway/ids.h"
#include "causeway/store.h"
#include "provenance/dsse.h"
#include "provenance/facts.h"
#include "provenance/statement.h"
#include "service/provenance_service.h"
#include "store/commit_queue.h"

using namespace causeway;
using nlohmann::json;

namespace {

// What the probe writes on an 8-GPU H100 node.
std::string ProbeText(int node) {
  std::string t = "+node\tgpu-node-" + std::to_string(node) + "\n+kernel\tLinux 5.15.0-105-generic\n"
                  "+os\tUbuntu 22.04.4 LTS\n+cpu\t224 x Intel(R) Xeon(R) Platinum 8480+\n+memory_mb\t2063937\n"
                  "+cuda\t12.4\n+cuda_toolkit\t12.4\n+interconnect\tinfiniband\n+infiniband_devices\tmlx5_0 mlx5_1\n"
                  "-image\tthe attempt ran on the node's own operating system, in no container image\n"
                  "+torch\t2.3.0+cu121\n+torch_cuda\t12.1\n+cudnn\t8902\n+nccl\t2.20.5\n";
  for (int g = 0; g < 8; ++g) {
    t += "+gpu\t" + std::to_string(g) + ", NVIDIA H100 80GB HBM3, GPU-" + Sha256Hex(std::to_string(node * 8 + g)).substr(0, 32) +
         ", 550.54.15, 81559\n";
  }
  return t;
}

Attempt MakeAttempt(const std::string& job, int n, bool last, const Estate& estate) {
  Attempt a;
  a.job_id = job;
  a.number = n;
  a.cluster = "coreweave-us-h100";
  a.pool = "h100";
  a.state = last ? "succeeded" : "preempted";
  a.failure_class = last ? "" : "preemption";
  a.started_at = FromUnixMicros(1796000000LL * 1000000 + n * 3600LL * 1000000);
  a.ended_at = a.started_at + std::chrono::hours(1);
  a.exit_code = last ? 0 : -1;
  a.gpus = 8;
  a.gpu_seconds = 8 * 3600;
  a.cost_micros = 8 * 2'500'000;
  a.resumed_from = n > 1 ? "s3://ckpt/run/step-" + std::to_string((n - 1) * 1000) : "";
  provenance::AttemptFacts f = provenance::FactsAtPlacement(estate, a.cluster, a.pool, 8, 1);
  provenance::AddProbe(f, {ProbeText(n)}, true, "Slurm");
  a.facts = provenance::ToJson(f).dump();
  return a;
}

Estate BenchEstate() {
  Estate e;
  Cluster c;
  c.name = "coreweave-us-h100";
  c.provider = "coreweave";
  c.region = "us-east-04";
  c.zone = "us";
  NodePool p;
  p.name = "h100";
  p.gpu_type = "H100";
  p.gpus_per_node = 8;
  p.nodes = 32;
  p.interconnect = "infiniband";
  p.software = {{"driver", "550.54.15"}, {"cuda", "12.4"}};
  c.node_pools.push_back(p);
  e.clusters.push_back(c);
  return e;
}

JobRecord MakeJob(int64_t i) {
  JobRecord j;
  j.id = NewId("job", FromUnixMicros(1796000000LL * 1000000 + i * 1000));
  j.name = "train-" + std::to_string(i % 97);
  j.team = i % 3 ? "nlp" : "vision";
  j.owner = "researcher" + std::to_string(i % 500);
  j.state = JobState::kSucceeded;
  j.spec_yaml = "name: " + j.name + "\nresources: {accelerators: H100:8}\ndatasets: [{name: c4, version: \"2024-05\"}]\n"
                "run: torchrun train.py\n";
  j.spec_json = "{}";
  j.submitted_by = "tok_" + j.owner;
  j.created_at = FromUnixMicros(1796000000LL * 1000000 + i * 1000);
  j.updated_at = j.created_at;
  j.attempts = 2;
  return j;
}

double CpuSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t jobs = argc > 1 ? std::atoll(argv[1]) : 100000;
  std::filesystem::path dir =
      argc > 2 ? argv[2] : std::filesystem::temp_directory_path() / ("cw-provenance-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  Estate estate = BenchEstate();

  // 1. One 10-attempt job, built and signed, many times.
  provenance::JobHistory h;
  h.job = MakeJob(0);
  h.job.attempts = 10;
  for (int n = 1; n <= 10; ++n) {
    h.attempts.push_back(MakeAttempt(h.job.id, n, n == 10, estate));
    h.checkpoints.push_back(Checkpoint{h.job.id, n, n, "s3://ckpt/run/step-" + std::to_string(n * 1000), n * 1000,
                                       h.attempts.back().started_at, "sha256:" + Sha256Hex(std::to_string(n))});
  }
  h.facts = {JobFact{h.job.id, 1, 10, "mlflow.run_id", "\"3f2a9c\"", "tokj", {}},
             JobFact{h.job.id, 2, 10, "hyperparameters", R"({"lr":3e-4,"batch":1024,"warmup":2000})", "tokj", {}}};
  h.audit = AuditRange{100, 180, 47};
  auto key = identity::jwt::SigningKey::Generate(identity::jwt::Alg::kES256, "provenance-bench");
  if (!key.ok()) return 1;
  provenance::Builder builder{"http://causeway.example", "bench", "USD"};
  const int rounds = 200;
  size_t record_bytes = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < rounds; ++i) {
    std::string statement = provenance::StatementText(h, estate, builder);
    auto envelope = provenance::SignToText(provenance::kInTotoPayloadType, statement, *key);
    if (!envelope.ok()) return 1;
    record_bytes = envelope->size();
  }
  double record_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / rounds;

  // 2. Export: N jobs of two attempts each, with their audit events.
  std::string db = (dir / "records.db").string();
  std::filesystem::remove(db);
  auto store = OpenSqliteStore(db);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  auto s0 = std::chrono::steady_clock::now();
  const int64_t per_unit = 2000;
  for (int64_t done = 0; done < jobs; done += per_unit) {
    Status st = (*store)->Write([&](WriteTx& tx) -> Status {
      for (int64_t i = done; i < std::min(jobs, done + per_unit); ++i) {
        JobRecord j = MakeJob(i);
        RETURN_IF_ERROR(tx.InsertJob(j));
        for (int n = 1; n <= 2; ++n) RETURN_IF_ERROR(tx.PutAttempt(MakeAttempt(j.id, n, n == 2, estate)));
        for (const char* action : {"job.submit", "job.dispatch", "job.finish"}) {
          AuditEvent e;
          e.time = j.created_at;
          e.actor = j.submitted_by;
          e.action = action;
          e.resource = "job/" + j.id;
          e.details = {{"team", j.team}};
          RETURN_IF_ERROR(tx.AppendAudit(e));
        }
      }
      return Status::Ok();
    });
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.ToString().c_str());
      return 1;
    }
  }
  double seed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
  CommitQueue queue(**store, CommitQueue::Options{});
  RealClock clock;
  ProvenanceService service(**store, queue, estate, clock, builder);
  // Timed export: records/s by the wall clock, and the CPU seconds it used.
  struct Run {
    int64_t emitted = 0, bytes = 0;
    double s = 0, cpu_s = 0;
  };
  auto export_run = [&](int64_t limit) -> Run {
    Run r;
    ProvenanceExport which;
    which.limit = limit;
    double c0 = CpuSeconds();
    auto e0 = std::chrono::steady_clock::now();
    auto page = service.Export(which, [&](const std::string& line) {
      r.bytes += static_cast<int64_t>(line.size()) + 1;
      return true;
    });
    r.s = std::chrono::duration<double>(std::chrono::steady_clock::now() - e0).count();
    r.cpu_s = CpuSeconds() - c0;
    if (!page.ok()) std::fprintf(stderr, "export: %s\n", page.status().ToString().c_str());
    r.emitted = page.ok() ? page->emitted : 0;
    return r;
  };
  // a. Records not sealed yet (running jobs' records, signed on export):
  //    a tenth of the jobs is enough for the rate.
  Run live = export_run(std::max<int64_t>(1, jobs / 10));
  // b. Sealing: each finished job's record signed once and stored, as the
  //    server does in the background when jobs end.
  auto s1 = std::chrono::steady_clock::now();
  auto sealed = service.SealAllFinished();
  double seal_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - s1).count();
  // c. The export the target is for: every finished job's sealed record.
  Run all = export_run(0);
  queue.Stop();
  if (!sealed.ok() || *sealed != jobs || all.emitted != jobs) {
    std::fprintf(stderr, "sealed %lld, exported %lld of %lld\n", sealed.ok() ? static_cast<long long>(*sealed) : -1LL,
                 static_cast<long long>(all.emitted), static_cast<long long>(jobs));
    return 1;
  }
  double rate = static_cast<double>(jobs) / all.s;
  std::printf(
      "{\"record_10_attempts_ms\": %.3f, \"record_target_ms\": 10, \"record_ratio\": %.1f, \"record_bytes\": %zu, "
      "\"export_jobs\": %lld, \"export_s\": %.2f, \"export_cpu_s\": %.2f, \"export_records_per_s\": %.0f, "
      "\"export_target_per_s\": 10000, \"export_ratio\": %.2f, \"export_mb\": %.1f, "
      "\"seal_per_s\": %.0f, \"unsealed_export_per_s\": %.0f, \"seed_s\": %.1f}\n",
      record_ms, 10.0 / record_ms, record_bytes, static_cast<long long>(jobs), all.s, all.cpu_s, rate, rate / 10000.0,
      static_cast<double>(all.bytes) / 1e6, static_cast<double>(jobs) / seal_s,
      static_cast<double>(live.emitted) / live.s, seed_s);
  std::filesystem::remove_all(dir);
  return 0;
}
