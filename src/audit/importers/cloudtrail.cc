#include "audit/importers/importer.h"

namespace causeway::audit::detail {

// One CloudTrail record.
Status CloudTrail(dom::element r, std::string_view raw, const ImportOptions& o, Sink& sink) {
  std::string& out = sink.out;
  std::string_view event_id = Field(r, "eventID");
  std::string_view name = Field(r, "eventName");
  std::string_view when = Field(r, "eventTime");
  if (event_id.empty() || name.empty()) return InvalidArgument("a CloudTrail record needs eventID and eventName");
  int64_t time_ms = MillisOf(when);
  if (time_ms <= 0) return InvalidArgument("eventTime is missing or not an RFC 3339 time");
  bool read_only = false;
  if (r["readOnly"].get(read_only)) read_only = false;
  std::string_view error = Field(r, "errorCode");
  int status_id = error.empty() ? ocsf::kStatusSuccess : ocsf::kStatusFailure;

  Writer w(out);
  w.Open();
  Common(w, ocsf::kApiActivity, read_only ? 2 : ActivityOfWord(name), time_ms, status_id,
         ocsf::kSeverityInformational);
  if (!error.empty()) w.Str("status_code", error).StrIf("status_detail", Field(r, "errorMessage"));
  Metadata(w, "CloudTrail", "AWS", event_id, when);
  w.Open("cloud").Str("provider", o.provider).StrIf("region", Field(r, "awsRegion"));
  std::string_view account = Field(r, "recipientAccountId");
  if (!account.empty()) w.Open("account").Str("uid", account).Close();
  w.Close();
  bool found = false;
  dom::element who = Child(r, "userIdentity", found);
  w.Open("actor").Open("user");
  if (found) {
    std::string_view user_name = Field(who, "userName");
    if (user_name.empty()) {
      dom::element issuer;
      if (!who["sessionContext"]["sessionIssuer"].get(issuer)) user_name = Field(issuer, "userName");
    }
    std::string_view arn = Field(who, "arn");
    w.StrIf("name", user_name.empty() ? arn : user_name)
        .StrIf("uid", arn.empty() ? Field(who, "principalId") : arn)
        .StrIf("type", Field(who, "type"));
    std::string_view owner = Field(who, "accountId");
    if (!owner.empty()) w.Open("account").Str("uid", owner).Close();
  }
  w.Close().Close();
  std::string_view source = Field(r, "sourceIPAddress");
  SourceEndpoint(w, source);
  w.Open("http_request").StrIf("user_agent", Field(r, "userAgent")).Close();
  w.Open("api").Str("operation", name).Open("service").Str("name", Field(r, "eventSource")).Close();
  w.Open("request").Str("uid", Field(r, "requestID")).Close().Close();
  dom::array resources;
  if (!r["resources"].get(resources) && resources.size() > 0) {
    w.OpenArray("resources");
    for (dom::element res : resources) {
      w.Open().StrIf("uid", Field(res, "ARN")).StrIf("type", Field(res, "type")).Close();
    }
    w.CloseArray();
  }
  w.Str("raw_data", raw);
  w.Close();
  sink.Emit(event_id);
  return Status::Ok();
}

}  // namespace causeway::audit::detail
