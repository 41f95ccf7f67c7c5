#include "audit/importers/importer.h"

#include <algorithm>
#include <vector>

namespace causeway::audit::detail {

// One GCP Cloud Audit Logs LogEntry (protoPayload is an AuditLog), as
// `gcloud logging read --format=json` or a log sink writes them; GKE's
// Kubernetes audit logs arrive this way too (serviceName k8s.io). Service
// accounts' lifecycle is Account Change, IAM policy changes User Access
// Management, the rest API Activity.
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

  // Identity changes get their own classes: a service account's lifecycle
  // is Account Change (the account named), an IAM policy's new bindings
  // User Access Management (the first member and the roles), so search
  // shows who was given what without reading raw_data.
  std::string_view op = LastWord(method);
  std::string_view resource_name = Field(p, "resourceName");
  int class_uid = ocsf::kApiActivity;
  int activity = ActivityOfWord(op);
  std::string_view account;
  if (op == "CreateServiceAccount" || op == "DeleteServiceAccount" || op == "DisableServiceAccount" ||
      op == "EnableServiceAccount" || op == "UndeleteServiceAccount") {
    class_uid = ocsf::kAccountChange;
    activity = op == "CreateServiceAccount"   ? ocsf::kAccountCreate
               : op == "DeleteServiceAccount" ? ocsf::kAccountDelete
               : op == "DisableServiceAccount" ? ocsf::kAccountDisable
                                                : ocsf::kAccountEnable;
    bool has_response = false;
    dom::element response = Child(p, "response", has_response);
    if (has_response) account = Field(response, "email");
    if (account.empty()) {
      size_t at = resource_name.rfind("serviceAccounts/");
      if (at != std::string_view::npos) account = resource_name.substr(at + 16);
    }
    if (account.empty()) {
      bool has_request = false;
      dom::element request = Child(p, "request", has_request);
      if (has_request) account = Field(request, "account_id");
    }
  }
  // An IAM policy set: its binding deltas say who gained or lost which role.
  std::vector<std::string_view> roles;
  std::string_view member;
  bool added = false;
  if (op == "SetIamPolicy" || op == "SetIAMPolicy") {
    bool has_data = false;
    dom::element data = Child(p, "serviceData", has_data);
    dom::array deltas;
    if (has_data && !data["policyDelta"]["bindingDeltas"].get(deltas)) {
      for (dom::element d : deltas) {
        std::string_view role = Field(d, "role");
        if (!role.empty() && std::find(roles.begin(), roles.end(), role) == roles.end()) roles.push_back(role);
        if (member.empty()) member = Field(d, "member");
        added |= Field(d, "action") == "ADD";
      }
    }
    if (!roles.empty() && !member.empty()) {
      class_uid = ocsf::kUserAccess;
      activity = added ? ocsf::kAccessAssign : ocsf::kAccessRevoke;
      // "user:alice@corp.example", "serviceAccount:…", "group:…": the principal.
      if (size_t colon = member.find(':'); colon != std::string_view::npos && member.substr(0, 8) != "deleted:") {
        member = member.substr(colon + 1);
      }
    }
  }

  Writer w(sink.out);
  w.Open();
  Common(w, class_uid, activity, time_ms, status_id, SeverityOfLevel(Field(r, "severity")));
  if (class_uid == ocsf::kAccountChange) {
    if (account.empty()) {
      UnknownUser(w);
    } else {
      w.Open("user").Str("name", account).Str("type", "Service Account").Close();
    }
  } else if (class_uid == ocsf::kUserAccess) {
    w.Open("user").Str("name", member).Close();
    w.OpenArray("privileges");
    for (std::string_view role : roles) w.Str("", role);
    w.CloseArray();
  }
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
