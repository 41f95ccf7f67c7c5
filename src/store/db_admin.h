// Operations on a whole database, for `causeway migrate`, `causeway db
// check` and `causeway db copy`. `db` is a SQLite path (or sqlite:PATH) or a
// postgresql:// URL.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "store/audit_chain.h"
#include "causeway/status.h"

namespace causeway {

struct DbReport {
  std::string db;          // as given, password hidden
  int schema_version = 0;  // the last migration applied
  int latest_version = 0;  // the last migration this causeway knows
  int64_t jobs = 0;
  audit::VerifyReport chain;
};

// Brings the schema up to date (once, even with replicas starting at the
// same time) and reports the version.
Result<DbReport> Migrate(const std::string& db);
// Connects without writing, and checks the schema version and the whole
// audit chain.
Result<DbReport> CheckDb(const std::string& db);
// Copies every job (with its attempts, events, checkpoints, recorded facts
// and sealed provenance record), token and audit event from `from` into
// `to`, which must hold no jobs and no audit events yet, in one
// transaction; the audit chain is carried over event by event, each
// re-linked and checked against its original hash, then one `db.copy` event
// is appended. Idempotency keys are not copied: a retried
// submission after a move is a new job. `progress` hears what is done.
Result<DbReport> CopyDb(const std::string& from, const std::string& to,
                        const std::function<void(const std::string&)>& progress = {});

}  // namespace causeway
