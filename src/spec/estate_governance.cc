#include "spec/estate_parser.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace causeway::estate_detail {

void EstateParser::ParseTelemetry(const YAML::Node& n, const std::string& f) {
  static const KeySet kKeys{{"prometheus", "interval", "job_label", "attempt_label", "gpu_label"}};
  if (!r_.CheckMap(n, f, kKeys)) return;
  TelemetryConfig t;
  t.prometheus = Str(n, "prometheus", f);
  if (!t.prometheus.empty() && t.prometheus.rfind("http://", 0) != 0) {
    r_.Error(Get(n, "prometheus"), JoinField(f, "prometheus"), "expected http://HOST:PORT");
  }
  DurationField(n, f, "interval", t.interval);
  for (auto [key, out] : {std::pair{"job_label", &t.job_label}, std::pair{"attempt_label", &t.attempt_label},
                          std::pair{"gpu_label", &t.gpu_label}}) {
    std::string v = Str(n, key, f, false);
    if (!v.empty()) *out = v;
  }
  e_.telemetry = std::move(t);
}

void EstateParser::ParseAccess(const YAML::Node& n, const std::string& f) {
  static const KeySet kKeys{{"group", "role", "team"}};
  if (!r_.CheckMap(n, f, kKeys)) return;
  AccessBinding b;
  b.group = Str(n, "group", f);
  b.role = Str(n, "role", f);
  b.team = Str(n, "team", f, false);
  b.source = f;
  if (!b.role.empty() && std::find(std::begin(kRoleNames), std::end(kRoleNames), b.role) == std::end(kRoleNames)) {
    std::vector<std::string_view> roles(std::begin(kRoleNames), std::end(kRoleNames));
    std::string hint = spec::ClosestMatch(b.role, roles);
    r_.Error(Get(n, "role"), JoinField(f, "role"),
             "unknown role \"" + b.role + "\"" +
                 (hint.empty() ? "; expected admin, platform, team-admin, researcher, finance, auditor or viewer"
                               : "; did you mean \"" + hint + "\"?"));
    return;
  }
  if (!b.team.empty() && !e_.FindTeam(b.team)) {
    r_.Error(Get(n, "team"), JoinField(f, "team"), "unknown team \"" + b.team + "\"");
    return;
  }
  if (!b.group.empty() && !b.role.empty()) e_.access.push_back(std::move(b));
}

void EstateParser::ParseFederation(const YAML::Node& n, const std::string& f, std::set<std::string>& names) {
  static const KeySet kKeys{{"name", "kind", "audience", "teams", "default", "role_arn", "sts_endpoint",
                             "service_account", "token_url", "tenant_id", "client_id", "authority_host",
                             "api_server", "ca_file"}};
  if (!r_.CheckMap(n, f, kKeys)) return;
  CloudFederation c;
  c.name = NameField(n, f, names, "federation");
  c.kind = Str(n, "kind", f);
  // What each kind needs, and what it must not be given.
  std::map<std::string, std::vector<const char*>> own = {
      {"aws", {"role_arn", "sts_endpoint"}},
      {"gcp", {"service_account", "token_url"}},
      {"azure", {"tenant_id", "client_id", "authority_host"}},
      {"kubernetes", {"api_server", "ca_file"}}};
  if (!c.kind.empty() && !own.count(c.kind)) {
    r_.Error(Get(n, "kind"), JoinField(f, "kind"), "expected aws, gcp, azure or kubernetes");
    return;
  }
  for (const auto& [kind, keys] : own) {
    if (kind == c.kind) continue;
    for (const char* key : keys) {
      if (Get(n, key).IsDefined()) r_.Error(Get(n, key), JoinField(f, key), std::string(key) + " is for kind " + kind);
    }
  }
  c.audience = Str(n, "audience", f, false);
  if (c.kind == "aws") {
    c.role_arn = Str(n, "role_arn", f);
    if (!c.role_arn.empty() && (c.role_arn.rfind("arn:aws", 0) != 0 || c.role_arn.find(":role/") == std::string::npos)) {
      r_.Error(Get(n, "role_arn"), JoinField(f, "role_arn"), "expected a role's ARN such as arn:aws:iam::123456789012:role/training");
    }
    c.sts_endpoint = UrlField(n, f, "sts_endpoint", false);
    if (c.audience.empty()) c.audience = "sts.amazonaws.com";
  } else if (c.kind == "gcp") {
    if (c.audience.empty() || c.audience.rfind("//iam.googleapis.com/", 0) != 0) {
      r_.Error(Get(n, "audience").IsDefined() ? Get(n, "audience") : n, JoinField(f, "audience"),
               "expected the workload identity pool provider, //iam.googleapis.com/projects/NUMBER/locations/global/"
               "workloadIdentityPools/POOL/providers/PROVIDER");
    }
    c.service_account = Str(n, "service_account", f, false);
    if (!c.service_account.empty() && c.service_account.find('@') == std::string::npos) {
      r_.Error(Get(n, "service_account"), JoinField(f, "service_account"),
               "expected a service account's email such as trainer@project.iam.gserviceaccount.com");
    }
    if (std::string url = UrlField(n, f, "token_url", false); !url.empty()) c.token_url = url;
  } else if (c.kind == "azure") {
    c.tenant_id = Str(n, "tenant_id", f);
    c.client_id = Str(n, "client_id", f);
    c.authority_host = UrlField(n, f, "authority_host", false);
    if (c.audience.empty()) c.audience = "api://AzureADTokenExchange";
  } else if (c.kind == "kubernetes") {
    c.api_server = UrlField(n, f, "api_server", true);
    c.ca_file = Str(n, "ca_file", f, false);
    if (c.audience.empty()) {
      r_.Error(n, JoinField(f, "audience"),
               "needs audience: the one the API server's authentication configuration expects (jwt[].issuer.audiences)");
    }
  }
  StringList(n, f, "teams", "[nlp, vision]", c.teams);
  for (size_t i = 0; i < c.teams.size(); ++i) {
    if (!e_.FindTeam(c.teams[i])) {
      r_.Error(Get(n, "teams")[i], JoinField(f, "teams[" + std::to_string(i) + "]"), "unknown team \"" + c.teams[i] + "\"");
    }
  }
  if (YAML::Node d = Get(n, "default"); d.IsDefined()) c.by_default = r_.Bool(d, JoinField(f, "default")).value_or(false);
  // The token is minted for the audience the cloud expects, so the issuer
  // must be configured for it.
  const auto& w = e_.identity.workload;
  if (!w) {
    r_.Error(n, f, "a federation trusts Causeway's workload tokens: configure identity.workload first");
  } else if (!c.audience.empty() && std::find(w->audiences.begin(), w->audiences.end(), c.audience) == w->audiences.end()) {
    r_.Error(Get(n, "audience").IsDefined() ? Get(n, "audience") : n, JoinField(f, "audience"),
             "the token's audience " + c.audience + " is not among identity.workload.audiences");
  }
  if (!c.name.empty()) e_.identity.federations.push_back(std::move(c));
}

void EstateParser::ParseSecretStore(const YAML::Node& n, const std::string& f, std::set<std::string>& names) {
  static const KeySet kKeys{{"name", "kind", "identity", "region", "endpoint", "cluster", "teams"}};
  if (!r_.CheckMap(n, f, kKeys)) return;
  SecretStore s;
  s.name = NameField(n, f, names, "secret store");
  if (std::string kind = Str(n, "kind", f, false); !kind.empty()) s.kind = kind;
  if (s.kind != "aws-secrets-manager" && s.kind != "kubernetes") {
    r_.Error(Get(n, "kind"), JoinField(f, "kind"),
             "expected aws-secrets-manager (aws-sm:// references) or kubernetes (k8s:// references)");
    return;
  }
  const bool aws = s.kind == "aws-secrets-manager";
  for (const char* key : aws ? std::vector<const char*>{"cluster"} : std::vector<const char*>{"region", "endpoint"}) {
    if (Get(n, key).IsDefined()) r_.Error(Get(n, key), JoinField(f, key), std::string(key) + " is not for kind " + s.kind);
  }
  const std::string fed_kind = aws ? "aws" : "kubernetes";
  s.identity = Str(n, "identity", f);
  const CloudFederation* fed = s.identity.empty() ? nullptr : e_.identity.FindFederation(s.identity);
  if (!s.identity.empty() && (!fed || fed->kind != fed_kind)) {
    r_.Error(Get(n, "identity"), JoinField(f, "identity"),
             "expected one of identity.federations of kind " + fed_kind +
                 ": the store is read with the attempt's own identity");
  }
  if (aws) {
    s.region = Str(n, "region", f);
    s.endpoint = UrlField(n, f, "endpoint", false);
  } else {
    s.cluster = Str(n, "cluster", f, false);
  }
  YAML::Node t = Get(n, "teams");
  const std::string tf = JoinField(f, "teams");
  if (!t.IsDefined() || !t.IsMap() || t.size() == 0) {
    r_.Error(t.IsDefined() ? t : n, tf, "expected what each team may read, such as {nlp: [prod/nlp/*, shared/hf-token]}");
  } else {
    for (auto it = t.begin(); it != t.end(); ++it) {
      const std::string team = it->first.Scalar();
      const std::string at = JoinField(tf, team);
      if (!e_.FindTeam(team)) {
        r_.Error(it->first, at, "unknown team \"" + team + "\"");
        continue;
      }
      if (fed && !fed->AllowsTeam(team)) {
        r_.Error(it->first, at, "identity \"" + fed->name + "\", which reads this store, is not allowed to team \"" + team + "\"");
      }
      YAML::Node patterns = it->second;
      if (!patterns.IsSequence() || patterns.size() == 0) {
        r_.Error(patterns, at, aws ? "expected a list of secret names or prefixes ending in *, such as [prod/nlp/*]"
                                 : "expected a list of NAMESPACE/NAME or prefixes ending in *, such as [team-nlp/*]");
        continue;
      }
      for (size_t i = 0; i < patterns.size(); ++i) {
        auto p = r_.String(patterns[i], at + "[" + std::to_string(i) + "]");
        if (!p) continue;
        if (p->empty() || p->find('*') < p->size() - 1) {
          r_.Error(patterns[i], at + "[" + std::to_string(i) + "]", "expected a name, or a prefix ending in a single *");
          continue;
        }
        s.teams[team].push_back(*p);
      }
    }
  }
  if (!s.name.empty()) e_.identity.secret_stores.push_back(std::move(s));
}

void EstateParser::ParseIdentity(const YAML::Node& n, const std::string& f) {
  static const KeySet kKeys{{"oidc", "workload", "federations", "secret_stores", "deprovision", "breakglass"}};
  if (!r_.CheckMap(n, f, kKeys)) return;
  if (YAML::Node o = Get(n, "oidc"); o.IsDefined()) {
    std::string of = JoinField(f, "oidc");
    static const KeySet kOidc{{"issuer", "audience", "audiences", "username_claim", "groups_claim", "leeway",
                               "require_provisioned"}};
    if (r_.CheckMap(o, of, kOidc)) {
      OidcConfig c;
      c.issuer = UrlField(o, of, "issuer", true);
      std::string one = Str(o, "audience", of, false);
      if (!one.empty()) c.audiences.push_back(one);
      StringList(o, of, "audiences", "[causeway, 0oa1b2c3]", c.audiences);
      if (c.audiences.empty()) r_.Error(o, of, "needs audience: the client id tokens are issued for");
      for (auto [key, out] : {std::pair{"username_claim", &c.username_claim}, std::pair{"groups_claim", &c.groups_claim}}) {
        std::string v = Str(o, key, of, false);
        if (!v.empty()) *out = v;
      }
      DurationField(o, of, "leeway", c.leeway);
      if (c.leeway > Micros(300LL * 1000000)) r_.Error(Get(o, "leeway"), JoinField(of, "leeway"), "at most 5m");
      if (auto v = Get(o, "require_provisioned"); v.IsDefined()) {
        c.require_provisioned = r_.Bool(v, JoinField(of, "require_provisioned")).value_or(false);
      }
      e_.identity.oidc = std::move(c);
    }
  }
  if (YAML::Node w = Get(n, "workload"); w.IsDefined()) {
    std::string wf = JoinField(f, "workload");
    static const KeySet kWorkload{{"issuer", "audiences", "lifetime", "alg"}};
    if (r_.CheckMap(w, wf, kWorkload)) {
      WorkloadIdentityConfig c;
      c.issuer = UrlField(w, wf, "issuer", false);  // default: the server's own address
      StringList(w, wf, "audiences", "[sts.amazonaws.com]", c.audiences);
      if (c.audiences.empty()) r_.Error(w, wf, "needs audiences: who the job tokens are for, e.g. [sts.amazonaws.com]");
      DurationField(w, wf, "lifetime", c.lifetime);
      if (c.lifetime > Micros(24LL * 3600 * 1000000)) {
        r_.Error(Get(w, "lifetime"), JoinField(wf, "lifetime"), "at most 24h: tokens are refreshed, not long-lived");
      }
      std::string alg = Str(w, "alg", wf, false);
      if (!alg.empty()) {
        if (alg != "ES256" && alg != "RS256") r_.Error(Get(w, "alg"), JoinField(wf, "alg"), "expected ES256 or RS256");
        c.alg = alg;
      }
      e_.identity.workload = std::move(c);
    }
  }
  // A list of named items, each read by `parse` (names unique in the list).
  using ItemParser = void (EstateParser::*)(const YAML::Node&, const std::string&, std::set<std::string>&);
  auto named_list = [&](const char* key, const char* example, ItemParser parse) {
    YAML::Node l = Get(n, key);
    if (!l.IsDefined()) return;
    const std::string lf = JoinField(f, key);
    if (!l.IsSequence()) {
      r_.Error(l, lf, std::string("expected a list such as ") + example);
      return;
    }
    std::set<std::string> names;
    for (size_t i = 0; i < l.size(); ++i) (this->*parse)(l[i], lf + "[" + std::to_string(i) + "]", names);
  };
  named_list("federations", "[{name: aws-training, kind: aws, role_arn: arn:aws:iam::123456789012:role/training}]",
             &EstateParser::ParseFederation);
  named_list("secret_stores",
             "[{name: company-sm, identity: aws-training, region: us-east-1, teams: {nlp: [prod/nlp/*]}}]",
             &EstateParser::ParseSecretStore);
  if (YAML::Node b = Get(n, "breakglass"); b.IsDefined()) {
    std::string bf = JoinField(f, "breakglass");
    static const KeySet kBreakglass{{"approvers", "self_approval", "max_duration", "roles", "groups", "webhook"}};
    if (r_.CheckMap(b, bf, kBreakglass)) {
      BreakglassConfig& c = e_.identity.breakglass;
      c.enabled = true;
      if (auto v = Get(b, "self_approval"); v.IsDefined()) {
        c.self_approval = r_.Bool(v, JoinField(bf, "self_approval")).value_or(false);
        if (c.self_approval) c.approvers = 0;
      }
      if (auto v = Get(b, "approvers"); v.IsDefined()) {
        c.approvers = static_cast<int>(r_.Int(v, JoinField(bf, "approvers"), 0, 1).value_or(1));
        if (c.approvers == 0 && !c.self_approval) {
          r_.Error(v, JoinField(bf, "approvers"),
                   "0 lets a requester activate their own grant: say so explicitly with self_approval: true");
        }
        if (c.approvers > 0 && c.self_approval) {
          r_.Error(v, JoinField(bf, "approvers"), "self_approval: true means no approver: remove approvers or set it to 0");
        }
      }
      StringList(b, bf, "groups", "[sre-oncall]", c.groups);
      if (c.groups.empty()) r_.Error(b, bf, "needs groups: the IdP groups whose members may ask, e.g. [sre-oncall]");
      DurationField(b, bf, "max_duration", c.max_duration);
      std::vector<std::string> roles;
      StringList(b, bf, "roles", "[admin, platform]", roles);
      for (const auto& role : roles) {
        if (std::find(std::begin(kRoleNames), std::end(kRoleNames), role) == std::end(kRoleNames)) {
          r_.Error(Get(b, "roles"), JoinField(bf, "roles"), "unknown role \"" + role + "\"");
        }
      }
      c.roles = roles;
      if (c.roles.empty()) r_.Error(b, bf, "needs roles: the roles that may be asked for, e.g. [platform]");
      c.webhook = UrlField(b, bf, "webhook", false);
    }
  }
  if (YAML::Node d = Get(n, "deprovision"); d.IsDefined()) {
    std::string df = JoinField(f, "deprovision");
    static const KeySet kDeprovision{{"queued", "running", "reassign_to"}};
    if (r_.CheckMap(d, df, kDeprovision)) {
      DeprovisionConfig& c = e_.identity.deprovision;
      std::string queued = Str(d, "queued", df, false), running = Str(d, "running", df, false);
      if (!queued.empty()) c.queued = queued;
      if (!running.empty()) c.running = running;
      c.reassign_to = Str(d, "reassign_to", df, false);
      if (c.queued != "cancel" && c.queued != "keep" && c.queued != "reassign") {
        r_.Error(Get(d, "queued"), JoinField(df, "queued"), "expected cancel, keep or reassign");
      }
      if ((c.queued == "reassign") != !c.reassign_to.empty()) {
        r_.Error(d, df, "queued: reassign goes with reassign_to: the userName that takes the jobs over");
      }
      if (c.running != "stop" && c.running != "finish") {
        r_.Error(Get(d, "running"), JoinField(df, "running"), "expected stop or finish");
      }
    }
  }
}

void EstateParser::ParseAudit(const YAML::Node& n, const std::string& f) {
  static const KeySet kKeys{{"retention", "data_logging", "buckets", "log_sources"}};
  if (!r_.CheckMap(n, f, kKeys)) return;
  AuditCoverageConfig& c = e_.audit;
  if (Get(n, "retention").IsDefined()) {
    Micros r{0};
    DurationField(n, f, "retention", r);
    if (r.count() > 0) c.retention = r;
  }
  List(n, "data_logging", [&](const YAML::Node& d, const std::string& df) {
    static const KeySet kOrg{{"provider", "since"}};
    if (!r_.CheckMap(d, JoinField(f, df), kOrg)) return;
    std::string field = JoinField(f, df);
    OrgDataLogging o{AuditProvider(d, field), {}};
    if (auto since = DateField(d, field, "since", true)) o.since = *since;
    c.data_logging.push_back(std::move(o));
  });
  std::set<std::string> buckets;
  List(n, "buckets", [&](const YAML::Node& b, const std::string& bf) {
    static const KeySet kBucket{{"provider", "name", "data_logging", "created", "holds"}};
    std::string field = JoinField(f, bf);
    if (!r_.CheckMap(b, field, kBucket)) return;
    AuditBucket bucket;
    bucket.provider = AuditProvider(b, field);
    bucket.name = Str(b, "name", field);
    if (!bucket.name.empty() && !buckets.insert(bucket.provider + "/" + bucket.name).second) {
      r_.Error(Get(b, "name"), JoinField(field, "name"), "duplicate bucket \"" + bucket.name + "\" at " + bucket.provider);
    }
    if (auto v = Get(b, "data_logging"); v.IsDefined()) bucket.data_logging = r_.Bool(v, JoinField(field, "data_logging"));
    bucket.created = DateField(b, field, "created", false);
    bucket.holds = Str(b, "holds", field, false);
    c.buckets.push_back(std::move(bucket));
  });
  List(n, "log_sources", [&](const YAML::Node& l, const std::string& lf) {
    static const KeySet kSource{{"provider", "source", "max_gap", "retention"}};
    std::string field = JoinField(f, lf);
    if (!r_.CheckMap(l, field, kSource)) return;
    AuditLogSource src;
    src.provider = AuditProvider(l, field);
    src.source = Str(l, "source", field);
    if (!src.source.empty() &&
        std::find(std::begin(kAuditSourceNames), std::end(kAuditSourceNames), src.source) == std::end(kAuditSourceNames)) {
      r_.Error(Get(l, "source"), JoinField(field, "source"),
               "unknown log source \"" + src.source + "\": expected k8s, cloudtrail, gcp, azure, okta or slurm");
    }
    DurationField(l, field, "max_gap", src.max_gap);
    if (Get(l, "retention").IsDefined()) {
      Micros r{0};
      DurationField(l, field, "retention", r);
      if (r.count() > 0) src.retention = r;
    }
    c.log_sources.push_back(std::move(src));
  });
}

void EstateParser::ParseReaper(const YAML::Node& n, const std::string& f) {
  static const KeySet kKeys{
      {"name", "team", "threshold", "window", "grace", "action", "dry_run", "max_gap", "exempt_labels"}};
  if (!r_.CheckMap(n, f, kKeys)) return;
  ReaperConfig c;
  c.name = NameField(n, f, reaper_names_, "reaper policy");
  c.team = Str(n, "team", f, false);
  if (!c.team.empty() && !e_.FindTeam(c.team)) {
    r_.Error(Get(n, "team"), JoinField(f, "team"), "unknown team \"" + c.team + "\"");
  }
  if (auto v = Get(n, "threshold"); v.IsDefined()) {
    c.threshold_percent = static_cast<int>(r_.Int(v, JoinField(f, "threshold"), 1, 100).value_or(20));
  }
  DurationField(n, f, "window", c.window);
  DurationField(n, f, "grace", c.grace);
  DurationField(n, f, "max_gap", c.max_gap);
  c.action = Str(n, "action", f, false);
  if (c.action.empty()) c.action = "cancel";
  if (c.action != "cancel" && c.action != "warn") {
    r_.Error(Get(n, "action"), JoinField(f, "action"), "expected cancel or warn, not \"" + c.action + "\"");
  }
  if (auto v = Get(n, "dry_run"); v.IsDefined()) c.dry_run = r_.Bool(v, JoinField(f, "dry_run")).value_or(false);
  StringList(n, f, "exempt_labels", "[interactive, keep=true]", c.exempt_labels);
  if (!c.name.empty()) e_.reaper.push_back(std::move(c));
}

void EstateParser::ParsePolicy(const YAML::Node& n, const std::string& f) {
  static const KeySet kKeys{{"name", "rule", "labels", "teams", "gpu_types", "zone", "max_gpus", "max_duration"}};
  if (!r_.CheckMap(n, f, kKeys)) return;
  PolicyConfig p;
  p.name = NameField(n, f, policy_names_, "policy");
  p.rule = Str(n, "rule", f);
  if (!p.rule.empty() && std::find(std::begin(kPolicyRules), std::end(kPolicyRules), p.rule) == std::end(kPolicyRules)) {
    std::vector<std::string_view> rules(std::begin(kPolicyRules), std::end(kPolicyRules));
    std::string hint = spec::ClosestMatch(p.rule, rules);
    r_.Error(Get(n, "rule"), JoinField(f, "rule"),
             "unknown rule \"" + p.rule + "\"" + (hint.empty() ? "; expected require-labels, pinned-image, allowed-gpu-types, require-residency or max-job-size" : "; did you mean \"" + hint + "\"?"));
    return;
  }
  StringList(n, f, "labels", "[team, cost-center]", p.labels);
  StringList(n, f, "teams", "[nlp, vision]", p.teams);
  StringList(n, f, "gpu_types", "[H100, A100-80GB]", p.gpu_types);
  for (auto& g : p.gpu_types) g = NormalizeGpuType(g).value_or(g);
  for (const auto& t : p.teams) {
    if (!e_.FindTeam(t)) r_.Error(Get(n, "teams"), JoinField(f, "teams"), "unknown team \"" + t + "\"");
  }
  p.zone = Str(n, "zone", f, false);
  if (auto v = Get(n, "max_gpus"); v.IsDefined()) p.max_gpus = static_cast<int>(r_.Int(v, JoinField(f, "max_gpus"), 1, 1'000'000).value_or(1));
  if (auto v = Get(n, "max_duration"); v.IsDefined()) {
    auto d = ParseDuration(r_.String(v, JoinField(f, "max_duration")).value_or(""));
    if (d.ok()) {
      p.max_duration = *d;
    } else {
      r_.Error(v, JoinField(f, "max_duration"), d.status().message());
    }
  }
  auto need = [&](bool ok, const char* what) {
    if (!ok) r_.Error(n, f, "rule " + p.rule + " needs " + what);
  };
  if (p.rule == "require-labels") need(!p.labels.empty(), "labels: [owner, ...]");
  if (p.rule == "allowed-gpu-types") need(!p.gpu_types.empty(), "gpu_types: [...]");
  if (p.rule == "require-residency") need(!p.zone.empty(), "zone: eu (or another residency zone)");
  if (p.rule == "max-job-size") need(p.max_gpus || p.max_duration, "max_gpus and/or max_duration");
  if (!p.name.empty()) e_.policies.push_back(std::move(p));
}

}  // namespace causeway::estate_detail
