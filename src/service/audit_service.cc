#include "service/audit_service.h"

#include "causeway/input.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "audit/ocsf.h"
#include "causeway/crypto.h"
#include "causeway/ids.h"
#include "causeway/text.h"
#include "identity/oidc.h"
#include "store/audit_chain.h"
#include "store/records_json.h"

namespace causeway {

using nlohmann::json;

namespace {

constexpr const char* kLinkKind = "IdentityLink";
constexpr size_t kImportBatch = 5000;
// Events on one object name read to find whom a deletion was for.
constexpr int kOwnerLookback = 20;
constexpr std::string_view kOwnProvider = "causeway";

// A directory user's emails, lower case.
std::vector<std::string> EmailsOf(const DirectoryEntry& user) {
  std::vector<std::string> out;
  const json resource = ResourceJson(user);
  if (!resource.contains("emails") || !resource["emails"].is_array()) return out;
  for (const json& e : resource["emails"]) {
    if (e.is_object() && e.contains("value") && e["value"].is_string()) out.push_back(AsciiLower(e["value"].get<std::string>()));
  }
  return out;
}

// A position in the merged, time-ordered trail: (time_ms, origin, id) with
// origin 0 for Causeway's own events (id = seq) and 1 for imported ones.
struct Cursor {
  int64_t time_ms = 0;
  int origin = 0;
  int64_t id = 0;
  bool operator<(const Cursor& o) const {
    return std::tie(time_ms, origin, id) < std::tie(o.time_ms, o.origin, o.id);
  }
};

std::string CursorText(const Cursor& c) {
  return std::to_string(c.time_ms) + "." + std::to_string(c.origin) + "." + std::to_string(c.id);
}

Result<Cursor> ParseCursor(const std::string& text) {
  Cursor c;
  if (text.empty()) return c;
  unsigned long long t = 0, id = 0;
  int origin = 0, used = 0;
  if (std::sscanf(text.c_str(), "%llu.%d.%llu%n", &t, &origin, &id, &used) != 3 ||
      used != static_cast<int>(text.size()) || (origin != 0 && origin != 1)) {
    return InvalidArgument("field \"cursor\": not a cursor this server gave out");
  }
  c.time_ms = static_cast<int64_t>(t);
  c.origin = origin;
  c.id = static_cast<int64_t>(id);
  return c;
}

Cursor KeyOf(const AuditHit& h) {
  return Cursor{h.row.time_ms, h.row.provider == kOwnProvider && h.row.source == kOwnProvider ? 0 : 1, h.row.id};
}

// A link as its directory entry stores it, and as its audit events tell it.
json LinkResource(const IdentityLink& l) {
  json r = {{"provider", l.provider}, {"identity", l.identity}, {"person", l.person}};
  if (!l.breakglass.empty()) r["breakglass"] = l.breakglass;
  return r;
}

Details LinkDetails(const IdentityLink& l) {
  Details d = {{"provider", l.provider}, {"identity", l.identity}, {"person", l.person}};
  if (!l.breakglass.empty()) d["breakglass"] = l.breakglass;
  return d;
}

IdentityLink LinkOf(const DirectoryEntry& d) {
  const json r = ResourceJson(d);
  return IdentityLink{d.id, r.value("provider", ""), r.value("identity", ""), r.value("person", ""), r.value("breakglass", "")};
}

AuditEvent Event(const std::string& action, const std::string& resource, Details details, const std::string& actor,
                 Timestamp now) {
  AuditEvent e;
  e.time = now;
  e.actor = actor;
  e.action = action;
  e.resource = resource;
  e.details = std::move(details);
  return e;
}

}  // namespace

Result<AuditImportReport> AuditService::Import(const std::string& path, const audit::ImportOptions& options,
                                               const std::string& label, const std::string& actor) {
  if (options.provider.empty()) return InvalidArgument("field \"provider\" is required: the estate's provider the log is from");
  AuditImportReport report;
  std::vector<ImportedAuditEvent> batch;
  batch.reserve(kImportBatch);
  Status failed = Status::Ok();
  std::string source(audit::LogSourceName(options.source));
  auto flush = [&]() -> Status {
    if (batch.empty()) return Status::Ok();
    Timestamp now = BatchTime();
    int64_t stored = 0, conflicts = 0;
    std::vector<std::string> conflict_issues;
    RETURN_IF_ERROR(queue_.Run([&](WriteTx& tx) -> Status {
      stored = conflicts = 0;  // a unit may run again
      conflict_issues.clear();
      std::string rows;  // what the chain event commits to
      auto store = [&](ImportedAuditEvent& e) -> Result<bool> {
        ASSIGN_OR_RETURN(bool fresh, tx.InsertImportedAudit(e));
        if (fresh) {
          ++stored;
          audit::AppendImportedRow(e, rows);
        }
        return fresh;
      };
      for (ImportedAuditEvent& e : batch) {
        e.imported_at = now;
        if (audit::NeedsOwnerFromEarlier(e)) {
          // A deletion is the person's whose object it was: found from the
          // request that made it (stored before, or earlier in this batch).
          ASSIGN_OR_RETURN(auto earlier, tx.ImportedAuditOn(e.provider, e.source, e.resource, e.time_ms, kOwnerLookback));
          audit::TakeOwnerFromEarlier(e, earlier);
        }
        ASSIGN_OR_RETURN(bool fresh, store(e));
        if (fresh) continue;
        // Stored before: the same event again, or another under its id
        // (kept beside it, and reported).
        ASSIGN_OR_RETURN(auto earlier, tx.ImportedAuditText(e.provider, e.source, e.source_id));
        if (!earlier || *earlier == e.event) continue;
        ImportedAuditEvent other = e;
        other.source_id = audit::ConflictId(e.source_id, e.event);
        ASSIGN_OR_RETURN(bool kept, store(other));
        if (kept) {
          ++conflicts;
          conflict_issues.push_back("event " + e.source_id + " was stored by an earlier import with different content; " +
                                    "both are kept, this one as " + other.source_id + ": check which is right");
        }
      }
      Details details{{"provider", options.provider},
                      {"source", source},
                      {"file", label},
                      {"events", static_cast<int64_t>(batch.size())},
                      {"stored", stored},
                      {"first_time_ms", batch.front().time_ms}};
      if (conflicts > 0) details["conflicts"] = conflicts;
      if (stored > 0) {
        details["imported_at"] = ToUnixMicros(now);
        details["digest"] = Sha256Hex(rows);
      }
      AuditEvent ev = Event("audit.import", "audit-source/" + options.provider + "/" + source, std::move(details), actor, now);
      return tx.AppendAudit(ev);
    }));
    report.stored += stored;
    report.already += static_cast<int64_t>(batch.size()) - stored;
    report.conflicts += conflicts;
    for (std::string& why : conflict_issues) {
      ++report.stats.issues_total;
      ++report.stats.conflicts;
      if (report.stats.issues.size() < 1000) report.stats.issues.push_back(audit::ImportIssue{label, 0, std::move(why)});
    }
    batch.clear();
    return Status::Ok();
  };
  auto stats = audit::ImportLog(path, options, [&](std::string_view id, std::string_view text) {
    if (!failed.ok()) return;
    ImportedAuditEvent row;
    row.provider = options.provider;
    row.source = source;
    row.source_id = std::string(id);
    row.event = std::string(text);
    if (Status st = audit::IndexEvent(text, row); !st.ok()) {
      failed = Internal("an imported event could not be indexed: " + st.message());
      return;
    }
    batch.push_back(std::move(row));
    if (batch.size() >= kImportBatch) failed = flush();
  });
  if (!stats.ok()) return stats.status();
  RETURN_IF_ERROR(failed);
  // The file's own findings first, then those against earlier imports.
  audit::ImportStats across = std::move(report.stats);
  report.stats = std::move(*stats);
  RETURN_IF_ERROR(flush());
  for (audit::ImportIssue& i : across.issues) {
    if (report.stats.issues.size() < 1000) report.stats.issues.push_back(std::move(i));
  }
  report.stats.issues_total += across.issues_total;
  report.stats.conflicts += across.conflicts;
  return report;
}

Timestamp AuditService::BatchTime() {
  MutexLock lock(batch_mu_);
  Timestamp now = clock_.Now();
  if (now <= last_batch_) now = last_batch_ + std::chrono::microseconds(1);
  last_batch_ = now;
  return now;
}

Result<AuditService::Subject> AuditService::SubjectOf(const std::string& who) const {
  Subject s;
  std::string key = AsciiLower(who);
  ASSIGN_OR_RETURN(std::vector<IdentityLink> links, Links());
  // By userName, then email, then a linked identity.
  ASSIGN_OR_RETURN(s.entry, identity::ReadPerson(store_, who));
  if (s.entry) s.name = s.entry->user.name;
  if (!s.name) {
    ASSIGN_OR_RETURN(auto users, store_.ListDirectory("User"));
    for (const DirectoryEntry& u : users) {
      std::vector<std::string> emails = EmailsOf(u);
      if (std::find(emails.begin(), emails.end(), key) != emails.end()) s.name = u.name;
    }
    for (const IdentityLink& l : links) {
      if (!s.name && l.identity == key) s.name = l.person;
    }
    if (s.name) {
      ASSIGN_OR_RETURN(s.entry, identity::ReadPerson(store_, *s.name));
    }
  }
  if (!s.name) {
    s.identities.emplace_back("", key);
    s.own_actors.push_back(who);
    return s;
  }
  std::string name = AsciiLower(*s.name);
  std::set<std::string> anywhere = {name};
  if (s.entry) {
    for (std::string& email : EmailsOf(s.entry->user)) anywhere.insert(std::move(email));
  }
  for (const std::string& id : anywhere) s.identities.emplace_back("", id);
  if (cluster_names_) {
    for (auto& [provider, id] : cluster_names_(*s.name)) s.identities.emplace_back(provider, AsciiLower(id));
  }
  for (IdentityLink& l : links) {
    if (AsciiLower(l.person) != name) continue;
    s.identities.emplace_back(l.provider == "*" ? "" : l.provider, l.identity);
    s.links.push_back(std::move(l));
  }
  s.own_actors.push_back("user:" + *s.name);
  ASSIGN_OR_RETURN(auto tokens, store_.ListTokens());
  for (TokenRecord& t : tokens) {
    if (t.user.empty() || AsciiLower(t.user) != name) continue;
    s.own_actors.push_back(t.id);
    s.tokens.push_back(std::move(t));
  }
  return s;
}

Result<std::vector<AuditHit>> AuditService::OwnEvents(const AuditSearch& q, const std::vector<std::string>& actors,
                                                      int64_t after_ms, int64_t after_seq) const {
  std::vector<AuditHit> out;
  std::string action = AsciiLower(q.action);
  // Causeway's own actions have a dot ("job.cancel", or a prefix "job."):
  // the store filters on those, so a rare action is found without turning
  // every event into OCSF first. An activity name ("delete") is matched
  // after conversion.
  const bool own_action = action.find('.') != std::string::npos;
  const bool after_conversion = !action.empty() && !own_action;
  // The cursor (none: 0, 0): past it in the order asked for.
  const bool has_cursor = after_ms > 0 || after_seq > 0;
  const Cursor cursor{after_ms, 0, after_seq};
  std::vector<std::string> wanted = actors.empty() ? std::vector<std::string>{""} : actors;
  for (const std::string& actor : wanted) {
    AuditFilter f;
    f.actor = actor;
    if (own_action) f.action = action;
    f.newest_first = q.newest_first;
    // Only what the page needs is turned into OCSF, unless a filter on the
    // converted event may drop most of it.
    f.limit = after_conversion ? 1000 : q.limit + 1;
    if (q.since_ms > 0) f.since = FromUnixMicros(q.since_ms * 1000);
    if (q.until_ms > 0) f.until = FromUnixMicros(q.until_ms * 1000);
    if (has_cursor && !q.newest_first) f.since = FromUnixMicros(std::max(q.since_ms, after_ms) * 1000);
    if (has_cursor && q.newest_first) {
      const int64_t until_ms = q.until_ms > 0 ? std::min(q.until_ms, after_ms + 1) : after_ms + 1;
      f.until = FromUnixMicros(until_ms * 1000);
    }
    int found = 0;
    for (;;) {
      ASSIGN_OR_RETURN(auto page, store_.ListAudit(f));
      for (const AuditEvent& e : page) {
        (q.newest_first ? f.before_seq : f.after_seq) = e.seq;
        AuditHit h;
        h.row.provider = h.row.source = std::string(kOwnProvider);
        h.row.source_id = "causeway:" + std::to_string(e.seq);
        h.row.id = e.seq;
        h.row.event = audit::ocsf::FromCauseway(e).dump();
        RETURN_IF_ERROR(audit::IndexEvent(h.row.event, h.row));
        Cursor key = KeyOf(h);
        if (has_cursor && !(q.newest_first ? key < cursor : cursor < key)) continue;
        if (q.until_ms > 0 && h.row.time_ms >= q.until_ms) continue;
        if (after_conversion && h.row.activity != action && AsciiLower(h.row.operation) != action) continue;
        out.push_back(std::move(h));
        ++found;
      }
      if (static_cast<int>(page.size()) < f.limit || found > q.limit) break;
    }
  }
  return out;
}

Result<AuditPage> AuditService::Search(const AuditSearch& q) const {
  if (q.who.empty()) return SearchFor(q, nullptr);
  ASSIGN_OR_RETURN(Subject subject, SubjectOf(q.who));
  return SearchFor(q, &subject);
}

Result<AuditPage> AuditService::SearchFor(const AuditSearch& q, const Subject* subject) const {
  if (q.limit < 1 || q.limit > 1000) return InvalidArgument("field \"limit\": expected 1 to 1000");
  ASSIGN_OR_RETURN(Cursor after, ParseCursor(q.cursor));
  AuditPage page;
  ImportedAuditQuery iq;
  std::vector<std::string> own_actors;
  if (subject) {
    iq.identities = subject->identities;
    own_actors = subject->own_actors;
    for (const auto& [provider, id] : iq.identities) {
      page.identities.push_back(provider.empty() ? id : provider + ":" + id);
    }
  }
  std::vector<AuditHit> hits;
  if (q.provider.empty() || q.provider == kOwnProvider) {
    ASSIGN_OR_RETURN(hits, OwnEvents(q, own_actors, after.time_ms, after.origin == 0 ? after.id : INT64_MAX));
  }
  if (q.provider != kOwnProvider) {
    iq.provider = q.provider;
    iq.action = q.action;
    iq.since_ms = q.since_ms;
    iq.until_ms = q.until_ms;
    iq.after_time_ms = after.time_ms;
    iq.newest_first = q.newest_first;
    iq.after_id = after.origin == 1 ? after.id : 0;
    iq.limit = q.limit + 1;
    ASSIGN_OR_RETURN(auto rows, store_.SearchImportedAudit(iq));
    for (ImportedAuditEvent& r : rows) {
      AuditHit h;
      h.row = std::move(r);
      hits.push_back(std::move(h));
    }
  }
  std::stable_sort(hits.begin(), hits.end(), [&](const AuditHit& a, const AuditHit& b) {
    return q.newest_first ? KeyOf(b) < KeyOf(a) : KeyOf(a) < KeyOf(b);
  });
  if (static_cast<int>(hits.size()) > q.limit) {
    hits.resize(static_cast<size_t>(q.limit));
    page.next_cursor = CursorText(KeyOf(hits.back()));
  }
  page.hits = std::move(hits);
  return page;
}

Result<PersonTrail> AuditService::Person(const std::string& who, int64_t since_ms, int limit) const {
  ASSIGN_OR_RETURN(Subject subject, SubjectOf(who));
  PersonTrail out;
  out.user_name = subject.name ? *subject.name : who;
  out.unlinked = !subject.name;
  out.entry = subject.entry;
  out.links = subject.links;
  Timestamp now = clock_.Now();
  for (const TokenRecord& t : subject.tokens) {
    out.credentials.push_back({t, !t.revoked_at && (!t.expires_at || now < *t.expires_at)});
  }
  AuditSearch q;
  q.since_ms = since_ms;
  q.limit = limit;
  ASSIGN_OR_RETURN(out.events, SearchFor(q, &subject));
  if (out.unlinked && out.events.hits.empty()) {
    return NotFound("nobody in the directory or the identity links is \"" + who +
                    "\", and no event in the trail names it as an identity at a provider");
  }
  return out;
}

Result<CoverageReport> AuditService::Coverage(const AuditCoverageConfig& c, Timestamp now) const {
  CoverageReport out;
  auto finding = [&](const char* kind, const std::string& provider, const std::string& name, const std::string& detail) {
    out.findings.push_back({kind, provider, name, detail});
  };
  auto day = [](Timestamp t) { return FormatRfc3339(t).substr(0, 10); };
  for (const AuditBucket& b : c.buckets) {
    const OrgDataLogging* org = nullptr;
    for (const OrgDataLogging& o : c.data_logging) {
      if (o.provider == b.provider) org = &o;
    }
    std::string state, why;
    if (b.data_logging) {
      state = *b.data_logging ? "logged" : "dark";
      why = *b.data_logging ? "data-plane logging is on for the bucket" : "data-plane logging is off for the bucket";
    } else if (!org) {
      state = "dark";
      why = "no data-plane logging: neither the bucket nor " + b.provider + "'s organisation-wide setting turns it on";
    } else if (!b.created) {
      state = "unknown";
      why = b.provider + " logs data-plane access for buckets made since " + day(org->since) +
            "; the bucket's creation date is not known (give created, or data_logging)";
    } else if (*b.created < org->since) {
      state = "dark";
      why = "made " + day(*b.created) + ", before " + b.provider + "'s organisation-wide data-plane logging began on " +
            day(org->since) + ", which covers only buckets made afterwards";
    } else {
      state = "logged";
      why = "made " + day(*b.created) + ", after organisation-wide data-plane logging began on " + day(org->since);
    }
    if (state != "logged") finding(state == "dark" ? "bucket-dark" : "bucket-unknown", b.provider, b.name,
                                   why + (b.holds.empty() ? "" : "; it holds " + b.holds));
    out.buckets.push_back({b.provider, b.name, state, why, b.holds});
  }
  ASSIGN_OR_RETURN(auto imported, store_.ListImportedSources());
  for (const AuditLogSource& s : c.log_sources) {
    const ImportedSource* seen = nullptr;
    for (const ImportedSource& i : imported) {
      if (i.provider == s.provider && i.source == s.source) seen = &i;
    }
    CoverageReport::Source entry{s.provider, s.source, "never", s.max_gap.count() / 1000000, {}, {}};
    if (!seen) {
      finding("source-never-imported", s.provider, s.source, "no " + s.source + " log of " + s.provider + " has been imported");
    } else {
      Micros gap = now - seen->last_import;
      entry.events = seen->events;
      entry.last_import = seen->last_import;
      entry.state = gap > s.max_gap ? "stale" : "current";
      if (gap > s.max_gap) {
        finding("source-stale", s.provider, s.source,
                "last imported " + std::to_string(gap.count() / 3600000000) + " h ago (" + FormatRfc3339(seen->last_import) +
                    "); expected at least every " + std::to_string(s.max_gap.count() / 3600000000) + " h");
      }
    }
    if (c.retention && s.retention && *s.retention < *c.retention) {
      finding("retention-short", s.provider, s.source,
              "kept " + std::to_string(s.retention->count() / 86400000000) + " days by the provider; the policy asks " +
                  std::to_string(c.retention->count() / 86400000000) + " (import at least that often, and keep the "
                  "imported events)");
    }
    out.log_sources.push_back(std::move(entry));
  }
  // Imported but not listed: coverage the estate does not know about.
  for (const ImportedSource& i : imported) {
    bool listed = std::any_of(c.log_sources.begin(), c.log_sources.end(),
                              [&](const AuditLogSource& s) { return s.provider == i.provider && s.source == i.source; });
    if (!listed) out.log_sources.push_back({i.provider, i.source, "unlisted", std::nullopt, i.events, i.last_import});
  }
  return out;
}

Result<IdentityLink> AuditService::Link(const std::string& provider, const std::string& identity,
                                        const std::string& person, const identity::Principal& who) {
  const std::string& actor = who.token_id;
  if (provider.empty() || provider.size() > 64) return InvalidArgument("field \"provider\": expected a provider name or *");
  if (identity.empty() || identity.size() > 512) return InvalidArgument("field \"identity\": expected the identity at the provider");
  RETURN_IF_ERROR(CheckName(provider, "provider", 64));
  RETURN_IF_ERROR(CheckName(identity, "identity", 512));
  ASSIGN_OR_RETURN(auto entry, identity::ReadPerson(store_, person));
  if (!entry) return InvalidArgument("field \"person\": no user \"" + person + "\" in the directory");
  Timestamp now = clock_.Now();
  DirectoryEntry d;
  d.kind = kLinkKind;
  d.id = NewId("lnk", now);
  d.name = provider + "\n" + AsciiLower(identity);  // one person per identity at a provider
  IdentityLink link{d.id, provider, AsciiLower(identity), entry->user.name, who.grant};
  d.resource = ResourceText(LinkResource(link));
  d.created_at = d.updated_at = now;
  RETURN_IF_ERROR(queue_.Run([&](WriteTx& tx) -> Status {
    if (Status st = tx.PutDirectoryEntry(d); st.code() == Code::kAlreadyExists) {
      return AlreadyExists(identity + " at " + provider + " is already linked to someone");
    } else if (!st.ok()) {
      return st;
    }
    AuditEvent e = Event("audit.link", "identity-link/" + d.id, LinkDetails(link), actor, now);
    return tx.AppendAudit(e);
  }));
  return link;
}

Result<IdentityLink> AuditService::Unlink(const std::string& id, const std::string& actor) {
  Timestamp now = clock_.Now();
  IdentityLink link;
  RETURN_IF_ERROR(queue_.Run([&](WriteTx& tx) -> Status {
    ASSIGN_OR_RETURN(auto d, tx.GetDirectoryEntry(kLinkKind, id));
    if (!d) return NotFound("no identity link " + id);
    link = LinkOf(*d);
    RETURN_IF_ERROR(tx.DeleteDirectoryEntry(kLinkKind, id));
    AuditEvent e = Event("audit.unlink", "identity-link/" + id, LinkDetails(link), actor, now);
    return tx.AppendAudit(e);
  }));
  return link;
}

Result<std::vector<IdentityLink>> AuditService::Links() const {
  ASSIGN_OR_RETURN(auto entries, store_.ListDirectory(kLinkKind));
  std::vector<IdentityLink> out;
  for (const DirectoryEntry& d : entries) out.push_back(LinkOf(d));
  return out;
}

Result<std::optional<AuditEvent>> LatestAuditEvent(const AuditReader& store, const std::string& resource,
                                                   const std::string& action) {
  ASSIGN_OR_RETURN(AuditRange range, store.GetAuditRange(resource));
  if (range.count == 0) return std::optional<AuditEvent>();
  AuditFilter f;
  f.resource = resource;
  f.action = action;
  f.after_seq = range.last - 1;
  f.limit = 1;
  ASSIGN_OR_RETURN(auto events, store.ListAudit(f));
  if (events.empty()) return std::optional<AuditEvent>();
  return std::optional<AuditEvent>(std::move(events.front()));
}

}  // namespace causeway
