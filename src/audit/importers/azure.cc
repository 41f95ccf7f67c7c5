#include "audit/importers/importer.h"

namespace causeway::audit::detail {

// One Azure Activity Log record: the diagnostic-settings form (a storage
// account's PT1H.json lines, or an Event Hubs {"records": [...]} batch) or the
// REST form (`az monitor activity-log list`, operationName.value, eventDataId).
Status Azure(dom::element r, std::string_view raw, const ImportOptions& o, Sink& sink) {
  bool found = false;
  std::string_view operation = Field(r, "operationName");
  dom::element op_obj = Child(r, "operationName", found);
  if (operation.empty() && found) operation = Field(op_obj, "value");
  std::string_view when = Field(r, "time");
  if (when.empty()) when = Field(r, "eventTimestamp");
  std::string_view result = Field(r, "resultType");
  dom::element status_obj = Child(r, "status", found);
  if (result.empty() && found) result = Field(status_obj, "value");
  std::string_view resource_id = Field(r, "resourceId");
  if (operation.empty() || when.empty()) return InvalidArgument("an Azure Activity Log record needs operationName and time");
  int64_t time_ms = MillisOf(when);
  if (time_ms <= 0) return InvalidArgument("time is not an RFC 3339 time");
  // The REST form has a unique eventDataId; diagnostic records are keyed by
  // their operation, correlation, result and time (the same write's Start and
  // Success are two records).
  std::string id(Field(r, "eventDataId"));
  if (id.empty()) {
    std::string_view correlation = Field(r, "correlationId");
    if (correlation.empty()) return InvalidArgument("an Azure Activity Log record needs eventDataId or correlationId");
    id.append(correlation).append("/").append(operation).append("/").append(result).append("/").append(when);
  }
  std::string lower_result = AsciiLower(LastWord(result));
  int status_id = lower_result == "success" || lower_result == "succeeded" ? ocsf::kStatusSuccess
                  : lower_result == "failure" || lower_result == "failed" ? ocsf::kStatusFailure
                                                                          : ocsf::kStatusUnknown;
  std::string_view level = Field(r, "level");

  Writer w(sink.out);
  w.Open();
  Common(w, ocsf::kApiActivity, ActivityOfWord(LastWord(operation)), time_ms, status_id, SeverityOfLevel(level));
  w.StrIf("status_detail", result);
  Metadata(w, "Activity Log", "Microsoft", id, when);
  w.Open("cloud").Str("provider", o.provider).StrIf("region", Field(r, "location"));
  std::string_view subscription = Field(r, "subscriptionId");
  if (!subscription.empty()) w.Open("account").Str("uid", subscription).Close();
  w.Close();
  // Who: the caller (REST), else the token's upn / name claims.
  std::string_view caller = Field(r, "caller");
  dom::element identity = Child(r, "identity", found);
  dom::element claims;
  bool has_claims = found ? !identity["claims"].get(claims) : !r["claims"].get(claims);
  std::string_view upn, oid;
  if (has_claims && claims.type() == dom::element_type::OBJECT) {
    upn = Field(claims, "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/upn");
    if (upn.empty()) upn = Field(claims, "name");
    oid = Field(claims, "http://schemas.microsoft.com/identity/claims/objectidentifier");
  }
  w.Open("actor").Open("user").StrIf("name", caller.empty() ? upn : caller).StrIf("uid", oid).Close().Close();
  std::string_view ip = Field(r, "callerIpAddress");
  dom::element http = Child(r, "httpRequest", found);
  if (ip.empty() && found) ip = Field(http, "clientIpAddress");
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
