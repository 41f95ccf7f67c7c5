#include "audit/importers/importer.h"

namespace causeway::audit::detail {

// One GCP Cloud Audit Logs LogEntry (protoPayload is an AuditLog), as
// `gcloud logging read --format=json` or a log sink writes them; GKE's
// Kubernetes audit logs arrive this way too (serviceName k8s.io).
Status Gcp(dom::element r, std::string_view raw, const ImportOptions& o, Sink& sink) {
  bool found = false;
  dom::element p = Child(r, "protoPayload", found);
  if (!found) return InvalidArgument("not a Cloud Audit Logs entry: expected protoPayload");
  std::string_view insert_id = Field(r, "insertId");
  std::string_view method = Field(p, "methodName");
  if (insert_id.empty() || method.empty()) return InvalidArgument("a Cloud Audit Logs entry needs insertId and protoPayload.methodName");
  std::string_view when = Field(r, "timestamp");
  int64_t time_ms = MillisOf(when);
  if (time_ms <= 0) return InvalidArgument("timestamp is missing or not an RFC 3339 time");
  // The outcome: google.rpc.Status (empty or code 0 is OK), and each
  // authorization check, one of which denied is a denied call.
  int64_t code = 0;
  bool has_status = false;
  dom::element status = Child(p, "status", has_status);
  if (has_status && status["code"].get(code)) code = 0;
  std::string_view message = has_status ? Field(status, "message") : std::string_view();
  bool denied = false;
  dom::array checks;
  if (!p["authorizationInfo"].get(checks)) {
    for (dom::element c : checks) {
      bool granted = true;
      if (!c["granted"].get(granted) && !granted) denied = true;
    }
  }
  int status_id = code == 0 && !denied ? ocsf::kStatusSuccess : ocsf::kStatusFailure;

  Writer w(sink.out);
  w.Open();
  Common(w, ocsf::kApiActivity, ActivityOfWord(LastWord(method)), time_ms, status_id, SeverityOfLevel(Field(r, "severity")));
  if (code != 0) w.Str("status_code", std::to_string(code)).StrIf("status_detail", message);
  if (code == 0 && denied) w.Str("status_detail", "permission denied (authorizationInfo.granted is false)");
  Metadata(w, "Cloud Audit Logs", "Google", insert_id, when, Field(r, "logName"));
  bool has_res = false;
  dom::element res = Child(r, "resource", has_res);
  dom::element labels;
  bool has_labels = has_res && !res["labels"].get(labels);
  w.Open("cloud").Str("provider", o.provider);
  if (has_labels) {
    std::string_view region = Field(labels, "region");
    std::string_view location = Field(labels, "location");
    std::string_view zone = Field(labels, "zone");
    if (region.empty() && !LooksLikeZone(location) && location != "global") region = location;
    if (zone.empty() && LooksLikeZone(location)) zone = location;
    w.StrIf("region", region).StrIf("zone", zone);
    w.StrIf("project_uid", Field(labels, "project_id"));
  }
  w.Close();
  dom::element auth = Child(p, "authenticationInfo", found);
  w.Open("actor");
  std::string_view email = found ? Field(auth, "principalEmail") : std::string_view();
  std::string_view subject = found ? Field(auth, "principalSubject") : std::string_view();
  if (email.empty() && subject.empty()) {
    UnknownUser(w);
  } else {
    w.Open("user");
    // GKE puts Kubernetes names ("system:kube-scheduler") here too: only
    // an address is an email address.
    bool address = email.find('@') != std::string_view::npos && email.substr(0, 7) != "system:";
    w.StrIf("name", email).StrIf("email_addr", address ? email : std::string_view()).StrIf("uid", subject);
    w.Close();
  }
  w.Close();
  dom::element meta = Child(p, "requestMetadata", found);
  std::string_view ip = found ? Field(meta, "callerIp") : std::string_view();
  SourceEndpoint(w, ip);
  if (found) w.Open("http_request").StrIf("user_agent", Field(meta, "callerSuppliedUserAgent")).Close();
  w.Open("api").Str("operation", method).Open("service").Str("name", Field(p, "serviceName")).Close().Close();
  std::string_view resource_name = Field(p, "resourceName");
  if (!resource_name.empty()) {
    w.OpenArray("resources").Open().Str("uid", resource_name);
    if (has_res) w.StrIf("type", Field(res, "type"));
    w.Close().CloseArray();
  }
  w.Str("raw_data", raw);
  w.Close();
  sink.Emit(insert_id);
  return Status::Ok();
}

}  // namespace causeway::audit::detail
