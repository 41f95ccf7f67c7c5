// Providers' audit logs, normalized to OCSF (audit/ocsf.h) as they stream
// by: Kubernetes audit events (audit.k8s.io/v1, also inside AKS's
// diagnostic-log envelope where the event is a JSON string), AWS CloudTrail
// records (a file with a Records array, or JSON lines), GCP Cloud Audit Logs
// entries, Azure Activity Log records (diagnostic or REST form), Okta System
// Log events, and Slurm accounting (`sacct --json`, slurmdbd's REST jobs
// listing). Files may be JSON lines, a JSON array, or one object holding the
// records, plain or gzip-compressed. A record that cannot be read is reported with its file,
// line and reason, and the rest of the file goes on. Each event keeps its
// source record verbatim in raw_data.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/records.h"
#include "causeway/status.h"

namespace causeway::audit {

enum class LogSource { kKubernetes, kCloudTrail, kGcp, kAzure, kOkta, kSlurm };
// "k8s", "cloudtrail", "gcp", "azure", "okta" or "slurm"; kInvalidArgument
// naming the accepted ones.
Result<LogSource> ParseLogSource(std::string_view name);
std::string_view LogSourceName(LogSource source);

struct ImportIssue {
  std::string file;
  int64_t line = 0;  // 1-based; in a Records array, the record's position
  std::string reason;
};

struct ImportStats {
  int64_t records = 0;     // read, good or bad
  int64_t events = 0;      // normalized and handed on
  int64_t skipped = 0;     // not audit-worthy: a request's earlier stages
  int64_t duplicates = 0;  // a source event id seen before in this file, same content
  int64_t conflicts = 0;   // a source event id seen before with different content (also an issue)
  int64_t issues_total = 0;
  std::vector<ImportIssue> issues;  // the first 1000
};

struct ImportOptions {
  std::string provider;  // the estate's provider the log is from (cloud.provider)
  LogSource source = LogSource::kKubernetes;
  // JSON lines are read this many bytes at a time (memory stays bounded by
  // it, or by the longest line); one-document files are read whole.
  size_t chunk_bytes = 16 << 20;
  // Bounds on what a file may expand to (0: none). For uploads through the
  // API: a gzip bomb is refused instead of filling memory or disk.
  uint64_t max_bytes = 0;  // decompressed bytes in all
  uint64_t max_ratio = 0;  // decompressed bytes per compressed byte (gzip only)
  // What errors and issues call the file ("" for its path): an upload's own
  // name, never the server's temporary path.
  std::string name;
};

// The id under which an event is kept when its source id was already read
// or stored with other content: both are kept, never one silently lost
// ("<id>~<first 12 hex digits of the SHA-256 of its OCSF text>").
std::string ConflictId(std::string_view source_id, std::string_view ocsf_json);

// Receives each event: its source id (the dedup key) and its OCSF JSON text.
using EmitFn = std::function<void(std::string_view source_id, std::string_view ocsf_json)>;

// Streams `path`. Errors only when the file cannot be read at all.
Result<ImportStats> ImportLog(const std::string& path, const ImportOptions& options, const EmitFn& emit);

struct NormalizedEvent {
  std::string source_id;
  std::string ocsf_json;
};

// One record (JSON text) normalized: usually one event, a Slurm job up to
// three (submitted, started, ended). The unit the streaming import uses, for
// tests. kInvalidArgument with the reason; kNotFound when the record is fine
// but not audit-worthy (a Kubernetes request's RequestReceived stage).
Result<std::vector<NormalizedEvent>> NormalizeRecord(std::string_view record, const ImportOptions& options);

// The searchable columns of an OCSF event (time_ms, class_uid, activity,
// operation, actor, subject, resource, status_id; the rest left as they
// are). The actor is the identity a person is known by at the source, lower
// case: an assumed role's session name (CloudTrail puts the person there),
// else the email, else the user name, else the uid.
Status IndexEvent(std::string_view ocsf_json, ImportedAuditEvent& row);

// Whom a deletion was for. A Kubernetes audit log names nobody in a
// DELETE (its body is DeleteOptions; the answer a Status), so the owner of
// a RoleBinding removed, or of a Job deleted, is known only from the
// request that made or changed the object. Whether `row` (indexed) is such
// a deletion: a Kubernetes delete of a named object, for nobody.
bool NeedsOwnerFromEarlier(const ImportedAuditEvent& row);
// Gives `row` the owner of the newest of `earlier` (OCSF texts of events
// on the same name at the same provider and source, newest first) that
// made or changed the same object (type and namespace too) for someone:
// its subject, and that owner in its first resource, marked as taken from
// the event (its source id). False when none did.
bool TakeOwnerFromEarlier(ImportedAuditEvent& row, const std::vector<std::string>& earlier);

// "create", "read", "update", "delete", "start", "enable", "disable",
// "logon", "logoff" or "other": the activity's meaning in its class.
std::string_view ActivityName(int class_uid, int activity_id);

}  // namespace causeway::audit
