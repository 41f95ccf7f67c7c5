// Causeway's schema, one entry per version, written once for both
// backends: SQLite runs each entry as it is, PostgreSQL after ForPostgres.
// Each entry runs once, in a transaction; never edit an entry that has
// shipped, append a new one (and raise kLatestSchemaVersion).
#pragma once

#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include "causeway/records.h"
#include "causeway/text.h"

namespace causeway::schema {

inline constexpr const char* kMigrations[] = {
    // 1: jobs, events, attempts, tokens, idempotency keys, audit chain.
    R"sql(
CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  team TEXT NOT NULL,
  owner TEXT NOT NULL,
  state TEXT NOT NULL,
  priority INTEGER NOT NULL,
  spec_yaml TEXT NOT NULL,
  spec_json TEXT NOT NULL,
  submitted_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX jobs_by_team ON jobs(team, id);
CREATE INDEX jobs_by_owner ON jobs(owner, id);
CREATE INDEX jobs_by_state ON jobs(state, id);
CREATE TABLE job_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id TEXT NOT NULL REFERENCES jobs(id),
  time INTEGER NOT NULL,
  type TEXT NOT NULL,
  message TEXT NOT NULL
);
CREATE INDEX job_events_by_job ON job_events(job_id, id);
CREATE TABLE attempts (
  job_id TEXT NOT NULL REFERENCES jobs(id),
  number INTEGER NOT NULL,
  cluster TEXT NOT NULL,
  state TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  ended_at INTEGER,
  exit_code INTEGER,
  failure_class TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (job_id, number)
);
CREATE TABLE idempotency_keys (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  job_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (scope, key)
);
CREATE TABLE api_tokens (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  scopes TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  revoked_at INTEGER
);
CREATE TABLE audit_events (
  seq INTEGER PRIMARY KEY,
  time INTEGER NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  resource TEXT NOT NULL,
  details TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL
);
CREATE INDEX audit_by_actor ON audit_events(actor, seq);
CREATE TABLE audit_head (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  seq INTEGER NOT NULL,
  hash TEXT NOT NULL
);
)sql",
    // 2: scheduler progress on jobs, placement facts on attempts.
    R"sql(
ALTER TABLE jobs ADD COLUMN cluster TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN gpu_seconds INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN cost_micros INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN reason TEXT NOT NULL DEFAULT '';
ALTER TABLE attempts ADD COLUMN pool TEXT NOT NULL DEFAULT '';
ALTER TABLE attempts ADD COLUMN flavor TEXT NOT NULL DEFAULT '';
ALTER TABLE attempts ADD COLUMN gpus INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN reserved INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN borrowed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN price_micros INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN gpu_seconds INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN cost_micros INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN placement TEXT NOT NULL DEFAULT '{}';
)sql",
    // 3: the backend's id of each attempt, to find it again after a restart.
    R"sql(
ALTER TABLE attempts ADD COLUMN backend_id TEXT NOT NULL DEFAULT '';
)sql",
    // 4: checkpoints, and which one each attempt resumed from.
    R"sql(
CREATE TABLE checkpoints (
  job_id TEXT NOT NULL REFERENCES jobs(id),
  seq INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  path TEXT NOT NULL,
  step INTEGER,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (job_id, seq)
);
ALTER TABLE attempts ADD COLUMN resumed_from TEXT NOT NULL DEFAULT '';
)sql",
    // 5: leases (the scheduler's leadership among replicas).
    R"sql(
CREATE TABLE leases (
  name TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
)sql",
    // 6: the last attempt of each job the scheduler set out to launch,
    // recorded before launching it.
    R"sql(
CREATE TABLE launches (
  job_id TEXT PRIMARY KEY REFERENCES jobs(id),
  attempt INTEGER NOT NULL,
  cluster TEXT NOT NULL,
  at INTEGER NOT NULL
);
)sql",
    // 7: imported bills (FOCUS), summed per day and attribution.
    R"sql(
CREATE TABLE billing_imports (
  id TEXT PRIMARY KEY,
  provider TEXT NOT NULL,
  file TEXT NOT NULL,
  digest TEXT NOT NULL,
  focus_version TEXT NOT NULL,
  row_count INTEGER NOT NULL,
  skipped INTEGER NOT NULL,
  issues INTEGER NOT NULL,
  first_day TEXT NOT NULL,
  last_day TEXT NOT NULL,
  imported_by TEXT NOT NULL,
  imported_at INTEGER NOT NULL,
  UNIQUE (provider, digest)
);
CREATE TABLE billing_rollups (
  import_id TEXT NOT NULL REFERENCES billing_imports(id),
  provider TEXT NOT NULL,
  day TEXT NOT NULL,
  month TEXT NOT NULL,
  provider_name TEXT NOT NULL,
  sub_account TEXT NOT NULL,
  region TEXT NOT NULL,
  resource_id TEXT NOT NULL,
  service_category TEXT NOT NULL,
  charge_category TEXT NOT NULL,
  pricing_category TEXT NOT NULL,
  commitment_status TEXT NOT NULL,
  currency TEXT NOT NULL,
  team TEXT NOT NULL,
  owner TEXT NOT NULL,
  job_id TEXT NOT NULL,
  project TEXT NOT NULL,
  row_count INTEGER NOT NULL,
  -- amounts: whole nano-units, and the pico-units beyond them (0..999)
  billed INTEGER NOT NULL,
  billed_frac INTEGER NOT NULL,
  effective INTEGER NOT NULL,
  effective_frac INTEGER NOT NULL,
  list INTEGER NOT NULL,
  list_frac INTEGER NOT NULL,
  contracted INTEGER NOT NULL,
  contracted_frac INTEGER NOT NULL,
  gpu_hours INTEGER NOT NULL,
  gpu_hours_frac INTEGER NOT NULL
);
CREATE INDEX billing_rollups_day ON billing_rollups (day);
)sql",
    // 8: what GPU telemetry saw of each attempt.
    R"sql(
ALTER TABLE attempts ADD COLUMN observed_gpu_seconds INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN work_gpu_seconds INTEGER NOT NULL DEFAULT 0;
)sql",
    // 9: the directory of users and groups provisioned through SCIM.
    R"sql(
CREATE TABLE directory (
  kind TEXT NOT NULL,
  id TEXT NOT NULL,
  name TEXT NOT NULL,
  name_key TEXT NOT NULL,
  external_id TEXT NOT NULL,
  active INTEGER NOT NULL,
  resource TEXT NOT NULL,
  version INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (kind, id),
  UNIQUE (kind, name_key)
);
)sql",
    // 10: the keys workload identity tokens are signed with.
    R"sql(
CREATE TABLE signing_keys (
  kid TEXT PRIMARY KEY,
  alg TEXT NOT NULL,
  private_pem TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  superseded_at INTEGER
);
)sql",
    // 11: the person a token acts for.
    R"sql(
ALTER TABLE api_tokens ADD COLUMN user_name TEXT NOT NULL DEFAULT '';
)sql",
    // 12: break-glass grants.
    R"sql(
CREATE TABLE breakglass (
  id TEXT PRIMARY KEY,
  user_name TEXT NOT NULL,
  role TEXT NOT NULL,
  team TEXT NOT NULL,
  reason TEXT NOT NULL,
  requested_at INTEGER NOT NULL,
  duration INTEGER NOT NULL,
  approved_by TEXT NOT NULL,
  approved_at INTEGER,
  expires_at INTEGER,
  revoked_at INTEGER
);
CREATE INDEX breakglass_by_time ON breakglass(requested_at);
)sql",
    // 13: providers' audit events, normalized to OCSF.
    R"sql(
CREATE TABLE imported_audit (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  provider TEXT NOT NULL,
  source TEXT NOT NULL,
  source_id TEXT NOT NULL,
  time_ms INTEGER NOT NULL,
  class_uid INTEGER NOT NULL,
  activity TEXT NOT NULL,
  operation TEXT NOT NULL,
  actor TEXT NOT NULL,
  subject TEXT NOT NULL,
  resource TEXT NOT NULL,
  status_id INTEGER NOT NULL,
  event TEXT NOT NULL,
  imported_at INTEGER NOT NULL,
  UNIQUE (provider, source, source_id)
);
CREATE INDEX imported_audit_by_time ON imported_audit(time_ms, id);
CREATE INDEX imported_audit_by_actor ON imported_audit(actor, time_ms, id);
CREATE INDEX imported_audit_by_subject ON imported_audit(subject, time_ms, id);
CREATE INDEX imported_audit_by_source ON imported_audit(provider, source, imported_at);
)sql",
    // 14: who is answerable for a token, and the break-glass grant it was made under.
    R"sql(
ALTER TABLE api_tokens ADD COLUMN creator TEXT NOT NULL DEFAULT '';
ALTER TABLE api_tokens ADD COLUMN grant_id TEXT NOT NULL DEFAULT '';
)sql",
    // 15: the replicas' change feed (submissions, cancellations, checkpoints),
    // numbered by the audit sequence of the event written with each.
    R"sql(
CREATE TABLE changes (
  seq INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  job_id TEXT NOT NULL,
  path TEXT NOT NULL DEFAULT '',
  at INTEGER NOT NULL
);
)sql",
    // 16: who is in which directory group, kept from each group's members as
    // it is stored (the groups stored before are read into it as this
    // migration runs: kMembershipsVersion).
    R"sql(
CREATE TABLE directory_members (
  group_id TEXT NOT NULL,
  member_id TEXT NOT NULL,
  PRIMARY KEY (group_id, member_id)
);
CREATE INDEX directory_members_by_member ON directory_members (member_id, group_id);
)sql",
    // 17: a job's secrets, sealed (identity/secret_box.h): never in clear.
    R"sql(
ALTER TABLE jobs ADD COLUMN sealed_secrets TEXT NOT NULL DEFAULT '';
)sql",
    // 18: pipelines: the steps of one task file, each run after the one
    // before it succeeded.
    R"sql(
ALTER TABLE jobs ADD COLUMN pipeline TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN pipeline_name TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN step INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN steps INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN after_job TEXT NOT NULL DEFAULT '';
CREATE INDEX jobs_by_pipeline ON jobs (pipeline) WHERE pipeline <> '';
)sql",
    // 19: job groups: the tasks of one task file started together (the
    // pipeline columns name the group), primary or auxiliary.
    R"sql(
ALTER TABLE jobs ADD COLUMN job_group INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN auxiliary INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN termination_delay_s BIGINT NOT NULL DEFAULT 0;
)sql",
    // 20: provenance: what each attempt ran on, checkpoints' digests, the
    // facts jobs record about themselves, and audit events found by
    // resource (a job's range of the chain).
    R"sql(
ALTER TABLE attempts ADD COLUMN facts TEXT NOT NULL DEFAULT '{}';
ALTER TABLE checkpoints ADD COLUMN digest TEXT NOT NULL DEFAULT '';
CREATE TABLE job_facts (
  job_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  recorded_by TEXT NOT NULL,
  recorded_at INTEGER NOT NULL,
  PRIMARY KEY (job_id, seq)
);
CREATE INDEX audit_by_resource ON audit_events(resource, seq);
)sql",
    // 21: finished jobs' provenance records, signed once when sealed, and
    // which finished jobs still wait for theirs (a partial index: the
    // sealer's look-up costs what is unsealed, not the whole ledger).
    R"sql(
CREATE TABLE provenance_records (
  job_id TEXT PRIMARY KEY,
  kid TEXT NOT NULL,
  sealed_at INTEGER NOT NULL,
  envelope TEXT NOT NULL
);
ALTER TABLE jobs ADD COLUMN sealed INTEGER NOT NULL DEFAULT 0;
CREATE INDEX jobs_unsealed ON jobs(id) WHERE sealed = 0 AND state IN ('succeeded', 'failed', 'cancelled');
)sql",
    // 22: audit events found by action (an action or a prefix such as
    // "reaper."): a rare action is read through the index, not by reading
    // the whole trail.
    R"sql(
CREATE INDEX audit_by_action ON audit_events(action, seq);
)sql",
    // 23: datasets: each version's manifest, named by its digest, the
    // replicas of each version, and what moving data cost.
    R"sql(
CREATE TABLE dataset_versions (
  digest TEXT PRIMARY KEY,
  dataset TEXT NOT NULL,
  version TEXT NOT NULL,
  source TEXT NOT NULL,
  hash_type TEXT NOT NULL,
  objects BIGINT NOT NULL,
  bytes BIGINT NOT NULL,
  registered_by TEXT NOT NULL,
  registered_at BIGINT NOT NULL,
  manifest TEXT NOT NULL,
  UNIQUE (dataset, version)
);
CREATE TABLE dataset_replicas (
  digest TEXT NOT NULL,
  location TEXT NOT NULL,
  path TEXT NOT NULL,
  state TEXT NOT NULL,
  bytes_moved BIGINT NOT NULL,
  detail TEXT NOT NULL,
  verified_at BIGINT,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (digest, location)
);
CREATE TABLE data_charges (
  id TEXT PRIMARY KEY,
  at BIGINT NOT NULL,
  kind TEXT NOT NULL,
  team TEXT NOT NULL,
  job_id TEXT NOT NULL,
  dataset TEXT NOT NULL,
  digest TEXT NOT NULL,
  from_place TEXT NOT NULL,
  to_place TEXT NOT NULL,
  bytes BIGINT NOT NULL,
  amount_micros BIGINT NOT NULL
);
CREATE INDEX data_charges_by_time ON data_charges(at);
CREATE INDEX data_charges_by_job ON data_charges(job_id, at);
)sql",
    // 24: a replica's storage is charged day by day up to charged_until.
    R"sql(
ALTER TABLE dataset_replicas ADD COLUMN charged_until BIGINT;
)sql",
    // 25: imported events found by their resource (the request that made
    // an object, for a deletion that names nobody).
    R"sql(
CREATE INDEX imported_audit_by_resource ON imported_audit(provider, source, resource, time_ms);
)sql",
};

// The audit listing's condition on the action, as an index can serve it:
// kind 0 none, 1 exact (`a`), 2 a prefix (`a`; `end` is ActionRangeEnd's).
// Both parameters appear whatever the kind (PostgreSQL must see every
// parameter it is given); unused ones are bound NULL. A prefix is a range
// only where text compares byte by byte (`bytewise`: SQLite's BINARY); a
// PostgreSQL database's collation may not (en_US ignores punctuation at
// first), so there it is compared as a prefix, and the index serves exact
// actions only.
inline std::string AuditActionClause(int kind, const std::string& a, const std::string& end, bool bytewise) {
  if (kind == 1) return " AND action = " + a + " AND " + end + " IS NULL";
  if (kind == 2 && bytewise) return " AND action >= " + a + " AND action < " + end;
  if (kind == 2) return " AND left(action, length(" + a + ")) = " + a + " AND " + end + " IS NOT NULL";
  return " AND " + a + " IS NULL AND " + end + " IS NULL";
}
// A prefix's range ends just past it: "reaper." -> "reaper/" ('/' follows '.').
inline std::string ActionRangeEnd(std::string prefix) {
  prefix.back() = static_cast<char>(prefix.back() + 1);
  return prefix;
}

// The migration that adds directory_members: both stores fill it from the
// groups already stored when they apply it.
inline constexpr int kMembershipsVersion = 16;

// A group's membership rows ($n numbers SQLite's parameters in order too):
// made afresh from the member ids whenever the group is stored, all of them
// in one statement as a JSON array of ids ($2).
inline constexpr const char* kDeleteMembersSql = "DELETE FROM directory_members WHERE group_id = $1";
inline constexpr const char* kInsertMembersSqlite =
    "INSERT INTO directory_members (group_id, member_id) SELECT $1, value FROM json_each($2) WHERE true "
    "ON CONFLICT DO NOTHING";
inline constexpr const char* kInsertMembersPostgres =
    "INSERT INTO directory_members (group_id, member_id) SELECT $1, m FROM jsonb_array_elements_text($2::jsonb) AS m "
    "ON CONFLICT DO NOTHING";
inline constexpr const char* kGroupsStoredSql = "SELECT id, resource FROM directory WHERE kind = 'Group'";
// A version's manifest, read on its own.
inline constexpr const char* kDatasetManifestSql = "SELECT manifest FROM dataset_versions WHERE digest = $1";
// $1 to, $2 digest, $3 location, $4 from: a compare-and-set. (SQLite
// numbers $N parameters in the order they first appear.)
inline constexpr const char* kAdvanceReplicaChargeSql =
    "UPDATE dataset_replicas SET charged_until = $1 WHERE digest = $2 AND location = $3 AND charged_until = $4 "
    "RETURNING digest";
// Whether a version with the label or the digest is stored ($1 dataset, $2 version, $3 digest).
inline constexpr const char* kDatasetVersionTakenSql =
    "SELECT digest FROM dataset_versions WHERE (dataset = $1 AND version = $2) OR digest = $3";

// The key a directory name is unique under: ASCII letters folded to lower
// case (SCIM's userName is case-insensitive; other scripts compare exactly).
inline std::string DirectoryNameKey(std::string name) {
  for (char& c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return name;
}



// The same DDL in PostgreSQL's words: 64-bit integers, and a sequence for the
// one auto-incrementing key.
inline std::string ForPostgres(std::string sql) {
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (size_t at = sql.find(from); at != std::string::npos; at = sql.find(from, at + to.size())) {
      sql.replace(at, from.size(), to);
    }
  };
  replace_all("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGSERIAL PRIMARY KEY");
  replace_all("INTEGER", "BIGINT");
  return sql;
}

}  // namespace causeway::schema
