#include "audit/importers/importer.h"

namespace causeway::audit::detail {

namespace {

// How an Azure record ended: resultType (diagnostic form; sign-in logs put
// an error code there, "0" for success), else status.value (REST form),
// else properties.status.errorCode (sign-ins).
int Outcome(std::string_view result, dom::element r) {
  std::string lower = AsciiLower(LastWord(result));
  if (lower == "success" || lower == "succeeded" || lower == "0") return ocsf::kStatusSuccess;
  if (lower == "failure" || lower == "failed" ||
      (!lower.empty() && std::all_of(lower.begin(), lower.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))) {
    return ocsf::kStatusFailure;  // a non-zero error code
  }
  int64_t code = -1;
  if (lower.empty() && !r["properties"]["status"]["errorCode"].get(code)) {
    return code == 0 ? ocsf::kStatusSuccess : ocsf::kStatusFailure;
  }
  return ocsf::kStatusUnknown;  // Started, Accepted, Active, ...
}

// "Microsoft.Storage/storageAccounts/listKeys/action": the action's own
// name (listKeys); "…/write", "…/delete": the last word.
std::string_view Verb(std::string_view operation) {
  std::string_view last = LastWord(operation);
  if (AsciiLower(last) != "action") return last;
  std::string_view rest = operation.substr(0, operation.size() - last.size() - 1);
  return LastWord(rest);
}

// Entra ID sign-ins exported through diagnostic settings.
bool IsSignIn(std::string_view category, std::string_view operation) {
  return category.find("SignInLogs") != std::string_view::npos || operation == "Sign-in activity";
}

}  // namespace

// One Azure Activity Log record: the diagnostic-settings form (a storage
// account's PT1H.json lines, or an Event Hubs {"records": [...]} batch),
// the REST form (`az monitor activity-log list`, operationName.value,
// eventDataId; a page is {"value": [...]}), or an Entra ID sign-in record
// arriving the same way (an Authentication event).
Status Azure(dom::element r, std::string_view raw, const ImportOptions& o, Sink& sink) {
  bool found = false;
  std::string_view operation = Field(r, "operationName");
  dom::element op_obj = Child(r, "operationName", found);
  if (operation.empty() && found) operation = Field(op_obj, "value");
  std::string_view when = Field(r, "time");
  if (when.empty()) when = Field(r, "eventTimestamp");
  if (when.empty()) when = Field(r, "createdDateTime");
  std::string_view result = Field(r, "resultType");
  dom::element status_obj = Child(r, "status", found);
  if (result.empty() && found) result = Field(status_obj, "value");
  std::string_view resource_id = Field(r, "resourceId");
  if (operation.empty() || when.empty()) return InvalidArgument("an Azure Activity Log record needs operationName and time");
  int64_t time_ms = MillisOf(when);
  if (time_ms <= 0) return InvalidArgument("time is not an RFC 3339 time");
  // The REST form has a unique eventDataId, a sign-in its id; diagnostic
  // records are keyed by their operation, correlation, result and time (the
  // same write's Start and Success are two records).
  std::string id(Field(r, "eventDataId"));
  bool has_props = false;
  dom::element props = Child(r, "properties", has_props);
  bool sign_in = IsSignIn(Field(r, "category"), operation);
  if (id.empty() && sign_in && has_props) id = std::string(Field(props, "id"));
  if (id.empty()) {
    std::string_view correlation = Field(r, "correlationId");
    if (correlation.empty()) return InvalidArgument("an Azure Activity Log record needs eventDataId or correlationId");
    id.append(correlation).append("/").append(operation).append("/").append(result).append("/").append(when);
  }
  int status_id = Outcome(result, r);
  std::string_view level = Field(r, "level");

  Writer w(sink.out);
  w.Open();
  int class_uid = sign_in ? ocsf::kAuthentication : ocsf::kApiActivity;
  int activity = sign_in ? 1 : ActivityOfWord(Verb(operation));
  Common(w, class_uid, activity, time_ms, status_id, SeverityOfLevel(level));
  w.StrIf("status_code", sign_in ? result : std::string_view());
  w.StrIf("status_detail", sign_in ? Field(r, "resultDescription") : result);
  Metadata(w, sign_in ? "Entra ID" : "Activity Log", "Microsoft", id, when);
  w.Open("cloud").Str("provider", o.provider);
  // A sign-in's location is the person's country, not a cloud region.
  if (!sign_in) w.StrIf("region", Field(r, "location"));
  std::string_view subscription = Field(r, "subscriptionId");
  if (!subscription.empty()) w.Open("account").Str("uid", subscription).Close();
  w.Close();
  // Who: the caller (REST), else the token's upn / name claims, else (a
  // sign-in) the account that signed in.
  std::string_view caller = Field(r, "caller");
  bool has_identity = false;
  dom::element identity = Child(r, "identity", has_identity);
  dom::element claims;
  bool has_claims = has_identity && identity.type() == dom::element_type::OBJECT ? !identity["claims"].get(claims)
                                                                                  : !r["claims"].get(claims);
  std::string_view upn, oid;
  if (has_claims && claims.type() == dom::element_type::OBJECT) {
    upn = Field(claims, "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/upn");
    if (upn.empty()) upn = Field(claims, "name");
    oid = Field(claims, "http://schemas.microsoft.com/identity/claims/objectidentifier");
  }
  if (has_props) {
    if (upn.empty()) upn = Field(props, "userPrincipalName");
    if (oid.empty()) oid = Field(props, "userId");
  }
  if (upn.empty() && has_identity && identity.type() == dom::element_type::STRING && identity.get(upn)) upn = {};
  std::string_view name = caller.empty() ? upn : caller;
  w.Open("actor");
  if (!name.empty() || !oid.empty()) {
    w.Open("user").StrIf("name", name).StrIf("uid", oid).Close();
  } else {
    UnknownUser(w);
  }
  if (has_props) w.StrIf("app_name", Field(props, "appDisplayName"));
  w.Close();
  if (sign_in) {
    if (!name.empty() || !oid.empty()) {
      w.Open("user").StrIf("name", name).StrIf("uid", oid).Close();
    } else {
      UnknownUser(w);
    }
    std::string_view app = has_props ? Field(props, "resourceDisplayName") : std::string_view();
    w.Open("service").Str("name", app.empty() ? "Microsoft Entra ID" : app).Close();
  }
  std::string_view ip = Field(r, "callerIpAddress");
  dom::element http = Child(r, "httpRequest", found);
  if (ip.empty() && found) ip = Field(http, "clientIpAddress");
  if (ip.empty() && has_props) ip = Field(props, "ipAddress");
  SourceEndpoint(w, ip);
  std::string_view provider_ns = operation.substr(0, operation.find('/'));
  w.Open("api").Str("operation", operation).Open("service").Str("name", provider_ns).Close();
  w.Open("request").StrIf("uid", Field(r, "correlationId")).Close().Close();
  if (!resource_id.empty()) w.OpenArray("resources").Open().Str("uid", resource_id).Close().CloseArray();
  w.Str("raw_data", raw);
  w.Close();
  sink.Emit(id);
  return Status::Ok();
}

}  // namespace causeway::audit::detail
