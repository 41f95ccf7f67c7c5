#include "causeway/store.h"
#include "store/audit_chain.h"
#include "store/postgres/pg_conn.h"

namespace causeway {

Status AuditReader::ScanAuditRaw(const std::function<bool(const audit::RawAuditEvent&)>& fn) const {
  std::string details;
  return ScanAudit([&](const AuditEvent& e) {
    details = audit::CanonicalDetails(e.details);
    return fn(audit::RawAuditEvent{e.seq, ToUnixMicros(e.time), e.actor, e.action, e.resource, details, e.prev_hash,
                                   e.hash});
  });
}

bool IsPostgresUrl(const std::string& db) {
  return db.rfind("postgresql://", 0) == 0 || db.rfind("postgres://", 0) == 0;
}

Result<std::unique_ptr<Store>> OpenStore(const std::string& db, bool read_only) {
  if (IsPostgresUrl(db)) return OpenPostgresStore(db, PostgresOptions{.read_only = read_only});
  std::string path = db.rfind("sqlite:", 0) == 0 ? db.substr(7) : db;
  return OpenSqliteStore(path, SqliteOptions{.read_only = read_only});
}

std::string DescribeDb(const std::string& db) { return IsPostgresUrl(db) ? pg::Redact(db) : db; }

}  // namespace causeway
