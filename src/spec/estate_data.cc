// The estate's `data:` block: where dataset replicas may be kept, how rclone
// reaches them, and what moving a GB between places costs.
//
//   data:
//     rclone_config: /etc/causeway/rclone.conf
//     locations:
//       - {name: nebius-eu, provider: nebius, region: eu-north1,
//          remote: "nebius-eu:causeway-datasets", url: s3://causeway-datasets,
//          storage_per_gb_month: 0.02}
//     transfer_prices:
//       - {from: nebius, to: "*", per_gb: 0.05, kind: egress}
//       - {from: nebius/eu-north1, to: coreweave/us-east-04, per_gb: 0, kind: interconnect}
#include <algorithm>

#include "spec/estate_parser.h"

namespace causeway {

std::optional<Money> StorageLocation::StorageCost(int64_t bytes, Micros kept) const {
  if (!storage_per_gb_month || bytes < 0 || kept.count() < 0) return std::nullopt;
  // price * bytes/10^9 * seconds/(730 * 3600), in two parts so that no
  // product passes 64 bits: whole GB, then the bytes past them.
  constexpr int64_t kGb = 1'000'000'000, kMonthSeconds = 730 * 3600;
  int64_t seconds = std::chrono::duration_cast<std::chrono::seconds>(kept).count();
  if (seconds > int64_t{366} * 24 * 3600) return std::nullopt;  // charged a day at a time
  auto whole = Money::Scale(*storage_per_gb_month, (bytes / kGb) * seconds, kMonthSeconds);
  auto part = Money::Scale(*storage_per_gb_month, (bytes % kGb) * seconds, kMonthSeconds * kGb);
  if (!whole.ok() || !part.ok()) return std::nullopt;
  auto sum = whole->Add(*part);
  if (!sum.ok()) return std::nullopt;
  return *sum;
}

std::string StorageLocation::RemoteOf(std::string_view of) const {
  std::string rest(of.substr(std::min(url.size(), of.size())));  // "" or "/path"
  return remote + (!remote.empty() && remote.back() == ':' && !rest.empty() ? rest.substr(1) : rest);
}

const StorageLocation* DataConfig::FindLocation(std::string_view name) const {
  for (const auto& l : locations) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

const StorageLocation* DataConfig::LocationOfUrl(std::string_view url) const {
  for (const auto& l : locations) {
    if (l.url.empty() || url.substr(0, l.url.size()) != l.url) continue;
    if (url.size() == l.url.size() || url[l.url.size()] == '/') return &l;
  }
  return nullptr;
}

namespace {

// How closely `pattern` ("provider/region", "provider", "*") names `place`
// ("provider/region"): 2, 1 or 0 when it does, -1 when it does not.
int Specificity(const std::string& pattern, const std::string& place) {
  if (pattern == "*") return 0;
  if (pattern == place) return 2;
  if (pattern.find('/') == std::string::npos && place.rfind(pattern + "/", 0) == 0) return 1;
  return -1;
}

}  // namespace

std::optional<Money> DataConfig::TransferPerGb(const std::string& from, const std::string& to,
                                               const std::string& currency) const {
  const TransferPrice* best = nullptr;
  int best_score = -1;
  for (const auto& t : transfer_prices) {
    int a = Specificity(t.from, from), b = Specificity(t.to, to);
    if (a < 0 || b < 0) continue;
    if (a * 3 + b > best_score) {
      best_score = a * 3 + b;
      best = &t;
    }
  }
  // Within one region nothing is charged unless a price names that region
  // at both ends.
  if (from == to && best_score < 8) return Money(0, currency);
  if (!best) return std::nullopt;
  return best->per_gb;
}

std::optional<Money> DataConfig::TransferCost(const std::string& from, const std::string& to, int64_t bytes,
                                              const std::string& currency) const {
  auto per_gb = TransferPerGb(from, to, currency);
  if (!per_gb) return std::nullopt;
  auto cost = Money::Scale(*per_gb, bytes, 1'000'000'000);
  if (!cost.ok()) return std::nullopt;
  return *cost;
}

namespace estate_detail {

bool EstateParser::KnownPlace(const std::string& place) const {
  if (place == "*") return true;
  auto slash = place.find('/');
  const Provider* p = e_.FindProvider(place.substr(0, slash));
  if (!p) return false;
  if (slash == std::string::npos) return true;
  std::string region = place.substr(slash + 1);
  return std::any_of(p->regions.begin(), p->regions.end(), [&](const Region& r) { return r.name == region; });
}

void EstateParser::ParseData(const YAML::Node& n, const std::string& f) {
  static const KeySet kKeys{{"rclone", "rclone_config", "node_rclone_config", "locations", "transfer_prices"}};
  if (!r_.CheckMap(n, f, kKeys)) return;
  DataConfig& d = e_.data;
  if (std::string s = Str(n, "rclone", f, false); !s.empty()) d.rclone = s;
  d.rclone_config = Str(n, "rclone_config", f, false);
  d.node_rclone_config = Str(n, "node_rclone_config", f, false);
  if (!d.node_rclone_config.empty() && d.node_rclone_config == d.rclone_config) {
    r_.Error(Get(n, "node_rclone_config"), JoinField(f, "node_rclone_config"),
             "the nodes' config must not be the server's: jobs can read it, so give it credentials that only read");
  }
  SubList(n, f, "locations", "storage locations", [&](const YAML::Node& ln, const std::string& lf) {
    static const KeySet kLocKeys{{"name", "provider", "region", "remote", "url", "storage_per_gb_month"}};
    if (!r_.CheckMap(ln, lf, kLocKeys)) return;
    StorageLocation l;
    l.name = NameField(ln, lf, location_names_, "storage location");
    l.provider = Str(ln, "provider", lf);
    l.region = Str(ln, "region", lf);
    l.remote = Str(ln, "remote", lf);
    if (!l.remote.empty() && l.remote.find(':') == std::string::npos) {
      r_.Error(Get(ln, "remote"), JoinField(lf, "remote"),
               "expected an rclone remote and path such as \"nebius-eu:causeway-datasets\"");
    }
    while (l.remote.size() > 1 && l.remote.back() == '/') l.remote.pop_back();
    l.url = Str(ln, "url", lf, false);
    if (!l.url.empty() && l.url.find("://") == std::string::npos) {
      r_.Error(Get(ln, "url"), JoinField(lf, "url"), "expected a URL such as s3://bucket");
    }
    while (!l.url.empty() && l.url.back() == '/') l.url.pop_back();
    l.storage_per_gb_month = Amount(ln, "storage_per_gb_month", lf, false);
    l.zone = RegionZone(ln, lf, l.provider, l.region);
    if (!l.name.empty()) d.locations.push_back(std::move(l));
  });
  SubList(n, f, "transfer_prices", "transfer prices", [&](const YAML::Node& tn, const std::string& tf) {
    static const KeySet kPriceKeys{{"from", "to", "per_gb", "kind"}};
    if (!r_.CheckMap(tn, tf, kPriceKeys)) return;
    TransferPrice t;
    t.from = Str(tn, "from", tf);
    t.to = Str(tn, "to", tf);
    for (auto [key, v] : {std::pair{"from", &t.from}, std::pair{"to", &t.to}}) {
      if (!v->empty() && !KnownPlace(*v)) {
        r_.Error(Get(tn, key), JoinField(tf, key),
                 "unknown place \"" + *v + "\": expected \"provider/region\", \"provider\" or \"*\"");
      }
    }
    t.kind = Str(tn, "kind", tf, false);
    auto price = Amount(tn, "per_gb", tf, true);
    if (!price) return;
    if (price->micros() < 0) {
      r_.Error(Get(tn, "per_gb"), JoinField(tf, "per_gb"), "a price cannot be negative");
      return;
    }
    t.per_gb = *price;
    d.transfer_prices.push_back(std::move(t));
  });
}

}  // namespace estate_detail
}  // namespace causeway
