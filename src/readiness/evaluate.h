// Readiness evaluation: each control's state per provider, computed from
// what Causeway knows (a Snapshot the service reads from the store) and the
// estate's readiness section, never asserted. Pure: the same estate and
// snapshot give the same report.
//
// A control without an owner, or whose owner is not an active person or a
// group in the directory, is not in place whatever else is true. A
// provider's own declarations are shown beside the evidence and can make a
// control that only the provider can answer for in place, but they are
// named as declarations, with their source and date.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "readiness/catalog.h"

namespace causeway::readiness {

enum class State { kInPlace, kPartly, kNotInPlace, kNotApplicable };
std::string_view StateName(State s);  // "in place", "partly", "not in place", "not applicable"
std::string_view StateCode(State s);  // "in_place", "partly", "not_in_place", "not_applicable"

// One fact behind a state: what it says, where it comes from (estate,
// directory, audit, provenance, declaration) and, for the audit trail, the
// range of sequence numbers it rests on.
struct EvidenceItem {
  std::string what;
  std::string source;
  std::string link;  // the API path that shows it, where there is one
  std::optional<int64_t> first_seq, last_seq;
};

struct Finding {
  std::string control;
  std::string provider;
  State state = State::kNotInPlace;
  std::string reason;
  std::string responsible;            // one of kResponsibleParties, "" when the estate does not say
  std::optional<ControlOwner> owner;  // as the estate names it
  std::vector<EvidenceItem> evidence;
  std::vector<ProviderDeclaration> declarations;  // the provider's, about this control
};

// The latest run of an acceptance test (`causeway acceptance ...`), as
// recorded in the audit trail.
struct AcceptanceResult {
  bool passed = false;
  Timestamp finished;
  int64_t seq = 0;           // its acceptance.run audit event
  std::string provider;      // the provider it exercised, where it names one
  std::string failed_step;   // the first step that failed, and why
  std::optional<int64_t> recovery_ms, objective_ms;
};

// What Causeway knows at `at`, read by the service before Evaluate.
struct Snapshot {
  Timestamp at;
  std::set<std::string> active_users;  // directory userNames of active users
  std::set<std::string> groups;        // directory group names
  // Break-glass grants asked for in the last 90 days, and how many of them
  // were used without another person's approval.
  int breakglass_grants = 0;
  int breakglass_self_approved = 0;
  // The audit chain's head.
  int64_t audit_head_seq = 0;
  // Each bucket the estate's audit section declares, as audit coverage
  // finds it: its data-plane access logged, dark or unknown, and why.
  struct Bucket {
    std::string provider, name, state, why;
  };
  std::vector<Bucket> buckets;
  // Of the latest jobs read (at most kJobsRead), those that ended and those
  // of them with a sealed provenance record.
  int64_t jobs_read = 0, ended_jobs = 0, sealed_jobs = 0;
  // The latest run of each acceptance test: identity, recovery, residency.
  std::map<std::string, AcceptanceResult> acceptance;
  // Of the latest jobs read that have run, per provider (of the cluster
  // their latest attempt ran on): how many, how many carried a static cloud
  // key in the environment Causeway passed (readiness/key_scan.h), with one
  // example, and how many named an image and how many of those pinned it
  // by digest.
  // Of them, those bound to a residency zone, and how many ran, or wrote
  // a checkpoint, outside it (readiness/residency.h), with one example.
  // And how many got federated cloud identities (identity.federations).
  struct ProviderJobs {
    int64_t ran = 0, static_keys = 0, with_image = 0, pinned = 0;
    std::string example;  // "job_x: AWS_SECRET_ACCESS_KEY (AWS secret key)"
    int64_t zone_bound = 0, left_zone = 0;
    std::string left_example;
    int64_t federated = 0;
    // Jobs with secrets, and those of them that read some by reference
    // from the company's store (secrets/broker.h) rather than by value.
    int64_t with_secrets = 0, by_reference = 0;
  };
  std::map<std::string, ProviderJobs> jobs_by_provider;
  // Billed amounts of the last 90 days per provider (from imported bills),
  // and how much of it has an owner. One currency per provider is assumed;
  // `currency` is the first seen.
  struct Spend {
    std::string currency;
    int64_t billed_micros = 0, owned_micros = 0;
  };
  std::map<std::string, Spend> spend_by_provider;
  // The audit feed's readers since the server started: how far each has
  // delivered and when it last asked (service/feed_readers.h).
  struct Exporter {
    std::string reader;
    int64_t delivered_seq = 0;
    Timestamp at;
  };
  std::vector<Exporter> exporters;
};

struct Report {
  Timestamp at;
  std::vector<Control> controls;       // the catalog as the estate has it
  std::vector<std::string> providers;  // the estate's, in its order
  std::vector<Finding> findings;       // controls × providers, in catalog order
};

// The built-in controls (with the estate's text over theirs), then the
// estate's own.
std::vector<Control> EffectiveCatalog(const ReadinessConfig& config);

Report Evaluate(const Estate& estate, const Snapshot& snapshot);

// The findings of `report` for `provider` ("" for every provider).
std::vector<const Finding*> FindingsFor(const Report& report, std::string_view provider);

// The four questions to answer before placing a production workload with
// a provider, each answered from the controls it rests on.
struct Question {
  std::string id;    // identity, siem, recreate, resume
  std::string text;
  std::vector<std::string> controls;
};
const std::vector<Question>& ProcurementQuestions();

// A question answered for one provider: yes when every control it rests on
// is in place (not applicable ones aside), no when none is even partly,
// partly otherwise; the reason names the controls that fall short.
struct QuestionAnswer {
  const Question* question = nullptr;
  std::string provider;
  std::string answer;  // yes, partly, no
  std::string reason;
  std::vector<const Finding*> basis;  // the findings it rests on
};
std::vector<QuestionAnswer> AnswerQuestions(const Report& report, std::string_view provider);

}  // namespace causeway::readiness
