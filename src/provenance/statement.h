// A job's provenance record: an in-toto Statement (v1) whose predicate has
// the shape of SLSA Provenance v1, built from what Causeway recorded of the
// job, and the same record read back for comparing two runs.
//
//   subject            the job's outputs with a digest: registered
//                      checkpoints and artifacts (or, when it has none, its
//                      spec: in-toto requires at least one subject)
//   buildDefinition    externalParameters: the spec as validated, its
//                      digest, who submitted it and with which credential;
//                      resolvedDependencies: image, datasets, code, the
//                      checkpoint it first resumed from
//   runDetails         builder: this Causeway; metadata: the job's id and
//                      when it ran; byproducts: every attempt (where, on
//                      what, how it ended, who acts next, its cost and
//                      checkpoints), the facts the job recorded, and the
//                      audit chain's range about the job
//
// Every object is written with sorted keys, so the same history gives the
// same bytes.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "causeway/estate.h"
#include "causeway/records.h"
#include "causeway/store.h"

namespace causeway::provenance {

inline constexpr std::string_view kStatementType = "https://in-toto.io/Statement/v1";
inline constexpr std::string_view kSlsaPredicateType = "https://slsa.dev/provenance/v1";
inline constexpr std::string_view kBuildType = "urn:causeway:job:v1";

// Everything recorded of one job.
struct JobHistory {
  JobRecord job;
  std::vector<Attempt> attempts;
  std::vector<Checkpoint> checkpoints;
  std::vector<JobFact> facts;
  AuditRange audit;
};

// Who produced the record.
struct Builder {
  std::string id;       // the server's URL, or "causeway" when it has none
  std::string version;  // of Causeway
  std::string currency = "USD";
};

// Reads a store's history of job `id`. kNotFound when there is no such job.
Result<JobHistory> ReadHistory(const Store& store, const std::string& id);
// The same for a job already read.
Result<JobHistory> ReadHistory(const Store& store, const JobRecord& job);

// The Statement for `history`. `estate` finds dataset replicas; the rest is
// the history's own.
nlohmann::json BuildStatement(const JobHistory& history, const Estate& estate, const Builder& builder);
// The same as JSON text (what BuildStatement(...).dump() writes), made
// without parsing each attempt's stored facts: what records are signed over.
std::string StatementText(const JobHistory& history, const Estate& estate, const Builder& builder);

// What two runs are compared on, read back from a Statement: one attempt of
// it (the last when `attempt` is 0).
struct RunSummary {
  std::string job_id;
  int attempt = 0;
  std::vector<std::pair<std::string, std::string>> fields;  // name, value ("" not recorded), in a fixed order
};
// kInvalidArgument when `statement` is not a Causeway provenance record or
// has no such attempt.
Result<RunSummary> Summarize(const nlohmann::json& statement, int attempt = 0);

struct Difference {
  std::string field, a, b;
};
// The fields whose values differ, in RunSummary's order.
std::vector<Difference> Diff(const RunSummary& a, const RunSummary& b);

// Whether `record` (a Statement made earlier) still agrees with `now` (the
// same job's Statement as the server would make it now): the same spec,
// every output, every attempt that had ended as it was (one that was
// running may have gone on), and the same start of the job's audit range
// with nothing of it gone. Each disagreement in words; none when it agrees.
std::vector<std::string> CompareRecords(const nlohmann::json& record, const nlohmann::json& now);

}  // namespace causeway::provenance
