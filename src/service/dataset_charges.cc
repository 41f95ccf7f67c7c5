// What data costs, in one place: copying a version (replication), reading a
// dataset across regions (a job placed away from its data), and keeping each
// replica, by the day.
#include <algorithm>

#include "causeway/ids.h"
#include "service/dataset_internal.h"
#include "service/dataset_service.h"
#include "spec/spec_json.h"

namespace causeway {

std::vector<DataCharge> RemoteReadCharges(const Estate& estate, const placement::DataPlaces& places,
                                          const JobRecord& job, const std::string& cluster_name, Timestamp at,
                                          const std::string& id_prefix) {
  std::vector<DataCharge> out;
  const Cluster* cluster = estate.FindCluster(cluster_name);
  if (!cluster) return out;
  std::string location = cluster->provider + "/" + cluster->region;
  // A spec that cannot be read names no dataset: the scheduler, which reads
  // it the same way, never dispatched such a job.
  auto spec = StoredSpec(job);
  if (!spec.ok()) return out;
  for (const DatasetRef& d : spec->datasets) {
    if (d.digest.empty()) continue;  // resolved at submission; empty only for specs never submitted
    const std::string& digest = d.digest;
    auto place = places.Verified(digest);
    if (!place || place->places.empty()) continue;
    const auto& at_places = place->places;
    if (std::find(at_places.begin(), at_places.end(), location) != at_places.end()) continue;
    std::string from = placement::NearestPlace(at_places, location);
    DataCharge c;
    c.id = id_prefix + "-" + std::to_string(out.size() + 1);
    c.at = at;
    c.kind = "remote-read";
    c.team = job.team;
    c.job_id = job.id;
    c.dataset = d.name;
    c.digest = digest;
    c.from_place = from;
    c.to_place = location;
    c.bytes = place->bytes;
    if (auto cost = estate.data.TransferCost(from, location, c.bytes, estate.currency)) c.amount_micros = cost->micros();
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

// The end of `t`'s UTC day.
Timestamp DayEnd(Timestamp t) {
  constexpr int64_t kDay = int64_t{86'400} * 1'000'000;
  int64_t us = ToUnixMicros(t);
  int64_t start = us - ((us % kDay) + kDay) % kDay;
  return FromUnixMicros(start + kDay);
}

}  // namespace

Status DatasetService::ChargeStorage(const std::vector<DatasetVersion>& versions,
                                     const std::vector<DatasetReplica>& replicas) {
  Timestamp now = clock_.Now();
  std::map<std::string, const DatasetVersion*> by_digest;
  for (const DatasetVersion& v : versions) by_digest[v.digest] = &v;
  // One ended day of one replica: [from, to), and its charge when priced.
  struct Day {
    std::string digest, location;
    Timestamp from, to;
    std::optional<DataCharge> charge;
  };
  std::vector<Day> due;
  for (const DatasetReplica& r : replicas) {
    auto v = by_digest.find(r.digest);
    if (!r.charged_until || v == by_digest.end()) continue;
    const DatasetVersion& version = *v->second;
    const StorageLocation* l = estate_.data.FindLocation(r.location);
    const Dataset* ds = estate_.FindDataset(version.dataset);
    for (Timestamp from = *r.charged_until; due.size() < kMaxStorageCharges; from = DayEnd(from)) {
      Day d{r.digest, r.location, from, DayEnd(from), std::nullopt};
      if (d.to > now) break;
      std::optional<Money> cost = l ? l->StorageCost(version.bytes, d.to - d.from) : std::nullopt;
      if (cost) {
        d.charge = DataCharge{NewId("dch", now), d.from,          "storage",     ds ? ds->owner : "", "",
                              version.dataset,  version.digest, "",            l->Location(),       version.bytes,
                              cost->micros()};
      }
      due.push_back(std::move(d));
    }
  }
  if (due.empty()) return Status::Ok();
  Timestamp through = due.front().to;
  for (const Day& d : due) through = std::max(through, d.to);
  return queue_.Run([&](WriteTx& tx) -> Status {
    int64_t days = 0, charges = 0, amount = 0;
    for (const Day& d : due) {
      ASSIGN_OR_RETURN(bool mine, tx.AdvanceReplicaCharge(d.digest, d.location, d.from, d.to));
      if (!mine) continue;  // another server charged it
      ++days;
      if (!d.charge) continue;
      RETURN_IF_ERROR(tx.InsertDataCharge(*d.charge));
      ++charges;
      amount += d.charge->amount_micros;
    }
    AuditEvent e;
    e.time = now;
    e.actor = "causeway";
    e.action = "dataset.storage";
    e.resource = "datasets";
    e.details = Details{{"replica_days", days},
                        {"charges", charges},
                        {"amount", Money(amount, estate_.currency).ToString()},
                        {"through", FormatRfc3339(through)}};
    return tx.AppendAudit(e);
  });
}

namespace datasets_detail {

ReplicationCharge ChargeReplication(const Estate& estate, const DatasetVersion& version, const std::string& from_place,
                                    const std::string& to_place, int64_t bytes, const std::string& charge_team,
                                    const std::string& charge_job, Timestamp now) {
  ReplicationCharge out;
  out.cost = estate.data.TransferCost(from_place, to_place, bytes, estate.currency);
  const Dataset* ds = estate.FindDataset(version.dataset);
  out.team = !charge_team.empty() ? charge_team : ds ? ds->owner : "";
  if (bytes > 0) {
    out.charge = DataCharge{NewId("dch", now), now,        "replication", out.team,
                            charge_job,         version.dataset, version.digest, from_place,
                            to_place,           bytes,      out.cost ? out.cost->micros() : 0};
  }
  return out;
}

}  // namespace datasets_detail

}  // namespace causeway
