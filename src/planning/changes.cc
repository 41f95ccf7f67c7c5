#include "planning/changes.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <optional>

#include "causeway/money.h"

namespace causeway::planning {
namespace {

std::vector<std::string> Parts(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (true) {
    size_t j = s.find(':', i);
    out.emplace_back(s.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i));
    if (j == std::string_view::npos) break;
    i = j + 1;
  }
  return out;
}

std::optional<int> Int(std::string_view s, int lo, int hi) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

const char* FlagOf(EstateChange::Kind k) {
  switch (k) {
    case EstateChange::Kind::kAddReservation: return "--add-reservation";
    case EstateChange::Kind::kRemoveCluster: return "--remove-cluster";
    case EstateChange::Kind::kPrice: return "--price";
  }
  return "";
}

Timestamp AddTerm(Timestamp start, int months, int days) {
  using namespace std::chrono;
  auto day = floor<std::chrono::days>(start);
  year_month_day ymd{day};
  ymd += std::chrono::months(months);
  if (!ymd.ok()) ymd = ymd.year() / ymd.month() / last;  // 31 January + 1 month: the month's last day
  return Timestamp(sys_days(ymd) + (start - day) + std::chrono::days(days));
}

Cluster* FindCluster(Estate& e, const std::string& name) {
  for (auto& c : e.clusters) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string Names(const Estate& e) {
  std::string out;
  for (const auto& c : e.clusters) out += (out.empty() ? "" : ", ") + c.name;
  return out;
}

}  // namespace

namespace {

// COUNT, TERM and PRICE of --add-reservation into `c`; the error in words.
std::string ReservationParts(const std::vector<std::string>& parts, EstateChange& c) {
  if (parts.size() != 5) return "expected CLUSTER:GPU_TYPE:COUNT:TERM:PRICE, e.g. nebius-eu-h200:H200:128:12mo:2.30";
  c.cluster = parts[0];
  c.gpu_type = parts[1];
  auto count = Int(parts[2], 1, 10'000'000);
  if (!count) return "COUNT must be a whole number of GPUs from 1";
  c.count = *count;
  std::string_view term = parts[3];
  std::optional<int> n;
  if (term.ends_with("mo")) {
    if ((n = Int(term.substr(0, term.size() - 2), 1, 120))) c.months = *n;
  } else if (term.ends_with("y")) {
    if ((n = Int(term.substr(0, term.size() - 1), 1, 10))) c.months = *n * 12;
  } else if (term.ends_with("d")) {
    if ((n = Int(term.substr(0, term.size() - 1), 1, 3650))) c.days = *n;
  }
  if (!n) return "TERM must be months (12mo), years (1y) or days (90d)";
  c.price = parts[4];
  return "";
}

std::string PriceParts(const std::vector<std::string>& parts, EstateChange& c) {
  if (parts.size() != 3 && parts.size() != 4) return "expected CLUSTER:GPU_TYPE:ON_DEMAND[:SPOT]";
  c.cluster = parts[0];
  c.gpu_type = parts[1];
  c.price = parts[2];
  if (parts.size() == 4) c.spot = parts[3];
  return "";
}

}  // namespace

Result<EstateChange> ParseChange(EstateChange::Kind kind, std::string_view text) {
  EstateChange c;
  c.kind = kind;
  c.text = std::string(text.substr(0, 200));
  auto parts = Parts(text);
  auto bad = [&](const std::string& what) { return InvalidArgument(std::string(FlagOf(kind)) + " " + c.text + ": " + what); };
  for (const auto& p : parts) {
    if (p.empty()) return bad("empty part");
  }
  std::string problem;
  switch (kind) {
    case EstateChange::Kind::kAddReservation: problem = ReservationParts(parts, c); break;
    case EstateChange::Kind::kPrice: problem = PriceParts(parts, c); break;
    case EstateChange::Kind::kRemoveCluster:
      if (parts.size() != 1) problem = "expected a cluster's name";
      c.cluster = parts[0];
      break;
  }
  if (!problem.empty()) return bad(problem);
  for (const std::string* amount : {&c.price, &c.spot}) {
    if (amount->empty()) continue;
    auto m = Money::Parse(*amount, "USD");
    if (!m.ok()) return bad(m.status().message());
    if (m->micros() < 0) return bad("a price cannot be negative");
  }
  return c;
}

namespace {

Result<std::string> AddReservation(Estate& estate, NodePool& pool, const EstateChange& ch, Timestamp start) {
  int nodes = (ch.count + pool.gpus_per_node - 1) / pool.gpus_per_node;
  pool.nodes += nodes;
  Reservation r;
  r.name = "plan-" + ch.cluster + "-" + ch.gpu_type + "-" + std::to_string(estate.reservations.size() + 1);
  r.cluster = ch.cluster;
  r.gpu_type = ch.gpu_type;
  r.count = ch.count;
  r.start = start;
  r.end = AddTerm(start, ch.months, ch.days);
  ASSIGN_OR_RETURN(r.price, Money::Parse(ch.price, estate.currency));
  std::string said = "reserved " + std::to_string(ch.count) + " " + ch.gpu_type + " on " + ch.cluster + " (" +
                     std::to_string(nodes) + " more nodes of " + std::to_string(pool.gpus_per_node) + ") from " +
                     FormatRfc3339(r.start) + " to " + FormatRfc3339(r.end) + " at " + r.price.ToString() + " per GPU-hour";
  estate.reservations.push_back(std::move(r));
  return said;
}

std::string RemoveCluster(Estate& estate, const std::string& name) {
  std::erase_if(estate.clusters, [&](const Cluster& c) { return c.name == name; });
  std::erase_if(estate.prices, [&](const Price& p) { return p.cluster == name; });
  std::erase_if(estate.reservations, [&](const Reservation& r) { return r.cluster == name; });
  return "removed cluster " + name + " with its prices and reservations";
}

Result<std::string> SetPrice(Estate& estate, const EstateChange& ch) {
  auto price = std::find_if(estate.prices.begin(), estate.prices.end(),
                            [&](const Price& p) { return p.cluster == ch.cluster && p.gpu_type == ch.gpu_type; });
  if (price == estate.prices.end()) {
    estate.prices.push_back(Price{ch.cluster, ch.gpu_type, Money(0, estate.currency), std::nullopt});
    price = estate.prices.end() - 1;
  }
  ASSIGN_OR_RETURN(price->on_demand, Money::Parse(ch.price, estate.currency));
  if (!ch.spot.empty()) {
    ASSIGN_OR_RETURN(auto spot, Money::Parse(ch.spot, estate.currency));
    price->spot = spot;
  }
  return "priced " + ch.gpu_type + " on " + ch.cluster + " at " + price->on_demand.ToString() + " per GPU-hour" +
         (ch.spot.empty() ? "" : " (spot " + price->spot->ToString() + ")");
}

}  // namespace

Result<std::vector<std::string>> ApplyChanges(Estate& estate, const std::vector<EstateChange>& changes, Timestamp start) {
  std::vector<std::string> said;
  for (const auto& ch : changes) {
    std::string flag = FlagOf(ch.kind);
    Cluster* cluster = FindCluster(estate, ch.cluster);
    if (!cluster) return InvalidArgument(flag + " " + ch.text + ": no cluster \"" + ch.cluster + "\" (the estate has " + Names(estate) + ")");
    if (ch.kind == EstateChange::Kind::kRemoveCluster) {
      said.push_back(RemoveCluster(estate, ch.cluster));
      continue;
    }
    // The cluster's pool of the type (the one with the most GPUs per node).
    NodePool* pool = nullptr;
    for (auto& p : cluster->node_pools) {
      if (p.gpu_type == ch.gpu_type && (!pool || p.gpus_per_node > pool->gpus_per_node)) pool = &p;
    }
    if (!pool) return InvalidArgument(flag + " " + ch.text + ": cluster " + ch.cluster + " has no " + ch.gpu_type + " pool");
    Result<std::string> done = ch.kind == EstateChange::Kind::kAddReservation ? AddReservation(estate, *pool, ch, start)
                                                                               : SetPrice(estate, ch);
    if (!done.ok()) return done.status();
    said.push_back(std::move(*done));
  }
  return said;
}

}  // namespace causeway::planning
