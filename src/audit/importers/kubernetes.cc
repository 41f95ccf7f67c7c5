#include "audit/importers/importer.h"

namespace causeway::audit::detail {

namespace {

// Whom the object is for, where the logged request says (the policy's
// Request level): a Causeway object's owner (its causeway.dev/owner
// annotation), a RoleBinding's first User subject. A person's search finds
// the event by it.
std::string_view OwnerOf(dom::element ev) {
  dom::element obj;
  if (ev["requestObject"].get(obj) && ev["responseObject"].get(obj)) return {};
  std::string_view owner;
  if (!obj["metadata"]["annotations"]["causeway.dev/owner"].get(owner)) return owner;
  dom::array subjects;
  if (!obj["subjects"].get(subjects)) {
    for (dom::element subject : subjects) {
      std::string_view kind, name;
      if (!subject["kind"].get(kind) && kind == "User" && !subject["name"].get(name)) return name;
    }
  }
  return {};
}

}  // namespace

// A Kubernetes audit event, or the AKS envelope around one.
Status Kubernetes(dom::parser& inner_parser, dom::element record, std::string_view raw, const ImportOptions& o,
                  Sink& sink) {
  std::string& out = sink.out;
  dom::element ev = record;
  std::string_view kind = Field(record, "kind");
  simdjson::padded_string inner_text;
  if (kind != "Event") {
    bool found = false;
    Child(record, "protoPayload", found);
    if (found) {
      return InvalidArgument("this is a GCP Cloud Audit Logs entry (GKE writes its Kubernetes audit log there): "
                             "import it with --source gcp");
    }
    // AKS diagnostic logs: {"category": "kube-audit", "properties": {"log": <event>}}, the
    // event as a JSON string or as an object.
    bool has_props = false;
    dom::element props = Child(record, "properties", has_props);
    dom::element log_el;
    bool has_log = has_props ? !props["log"].get(log_el) : !record["log"].get(log_el);
    if (!has_log) {
      return InvalidArgument("not a Kubernetes audit event: expected kind \"Event\" (or an AKS record with properties.log)");
    }
    if (log_el.type() == dom::element_type::OBJECT) {
      ev = log_el;
    } else {
      std::string_view log;
      if (log_el.get(log) || log.empty()) {
        return InvalidArgument("properties.log holds neither a Kubernetes audit event nor its JSON text");
      }
      inner_text = simdjson::padded_string(log);
      if (inner_parser.parse(inner_text).get(ev)) return InvalidArgument("the wrapped event in properties.log is not JSON");
    }
    if (Field(ev, "kind") != "Event") return InvalidArgument("the wrapped record is not a Kubernetes audit event");
  }
  std::string_view audit_id = Field(ev, "auditID");
  std::string_view verb = Field(ev, "verb");
  if (audit_id.empty() || verb.empty()) return InvalidArgument("a Kubernetes audit event needs auditID and verb");
  std::string_view stage = Field(ev, "stage");
  if (stage == "RequestReceived" || stage == "ResponseStarted") return NotFound("an earlier stage of the request");
  std::string_view ts = Field(ev, "stageTimestamp");
  if (ts.empty()) ts = Field(ev, "requestReceivedTimestamp");
  int64_t time_ms = MillisOf(ts);
  if (time_ms <= 0) return InvalidArgument("stageTimestamp is missing or not an RFC 3339 time");

  bool found = false;
  int64_t code = 0;
  dom::element status = Child(ev, "responseStatus", found);
  if (found && status["code"].get(code)) code = 0;
  int status_id = code == 0 ? ocsf::kStatusUnknown : code < 400 ? ocsf::kStatusSuccess : ocsf::kStatusFailure;
  int activity = ActivityOfVerb(verb);

  Writer w(out);
  w.Open();
  Common(w, ocsf::kApiActivity, activity, time_ms, status_id, ocsf::kSeverityInformational);
  if (stage == "Panic") w.Str("status_detail", "Panic");
  Metadata(w, "Kubernetes", "Kubernetes", audit_id, ts);
  w.Open("cloud").Str("provider", o.provider).Close();
  w.Open("actor");
  // An impersonated request acted as the impersonated user, with their
  // rights: they are the actor; who impersonated them is invoked_by.
  dom::element user = Child(ev, "user", found);
  bool impersonated = false;
  dom::element as = Child(ev, "impersonatedUser", impersonated);
  impersonated = impersonated && !Field(as, "username").empty();
  const std::string_view authenticated = found ? Field(user, "username") : std::string_view();
  if (impersonated) user = as;
  if ((!found && !impersonated) || (Field(user, "username").empty() && Field(user, "uid").empty())) {
    UnknownUser(w);
  } else {
    if (impersonated) w.StrIf("invoked_by", authenticated);
    w.Open("user");
    w.StrIf("name", Field(user, "username")).StrIf("uid", Field(user, "uid"));
    dom::array groups;
    if (!user["groups"].get(groups)) {
      w.OpenArray("groups");
      for (dom::element g : groups) {
        std::string_view name;
        if (!g.get(name)) w.Open().Str("name", name).Close();
      }
      w.CloseArray();
    }
    w.Close();
  }
  w.Close();
  w.Open("src_endpoint");
  dom::array ips;
  std::string_view ip;
  if (!ev["sourceIPs"].get(ips) && ips.size() > 0 && !ips.at(0).get(ip)) w.Str("ip", ip);
  if (ip.empty()) w.Int("type_id", 0).Str("type", "Unknown");
  w.Close();
  w.Open("http_request").StrIf("user_agent", Field(ev, "userAgent")).Open("url").Str("path", Field(ev, "requestURI")).Close().Close();
  dom::element ref = Child(ev, "objectRef", found);
  std::string_view group = found ? Field(ref, "apiGroup") : std::string_view();
  w.Open("api").Str("operation", verb);
  w.Open("service").Str("name", group.empty() ? "kubernetes" : group).Close();
  w.Open("request").Str("uid", audit_id).Close().Close();
  if (found) {
    w.OpenArray("resources").Open();
    w.StrIf("type", Field(ref, "resource")).StrIf("name", Field(ref, "name")).StrIf("namespace", Field(ref, "namespace"));
    if (std::string_view owner = OwnerOf(ev); !owner.empty()) w.Open("owner").Str("name", owner).Close();
    w.Close().CloseArray();
  }
  w.Str("raw_data", raw);
  w.Close();
  sink.Emit(audit_id);
  return Status::Ok();
}

}  // namespace causeway::audit::detail
