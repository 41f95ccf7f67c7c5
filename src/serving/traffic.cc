#include "serving/traffic.h"

#include <algorithm>

namespace causeway::serving {

Traffic::Traffic(const RuntimeApi& api, std::string backend, int slots, int backup_slots)
    : api_(api), backend_(std::move(backend)), free_(std::max(0, slots), true), free_backup_(std::max(0, backup_slots), true) {}

Status Traffic::Place(const std::string& replica, Role role, const std::string& host, uint16_t port) {
  if (slots_.count(replica)) return AlreadyExists("replica " + replica + " already has a slot");
  const bool backup = role != Role::kPreferred;
  std::vector<bool>& pool = backup ? free_backup_ : free_;
  auto it = std::find(pool.begin(), pool.end(), true);
  if (it == pool.end()) {
    return ResourceExhausted("every " + std::string(backup ? "backup " : "") + "slot of " + backend_ + " is taken (" +
                             std::to_string(pool.size()) + ")");
  }
  const int number = static_cast<int>(it - pool.begin()) + 1;
  const std::string server = SlotName(number, backup);
  // Out of traffic before it is pointed anywhere, whatever it held before.
  RETURN_IF_ERROR(api_.SetState(backend_, server, ServerState::kMaint));
  RETURN_IF_ERROR(api_.SetServer(backend_, server, host, port, 100));
  *it = false;
  slots_[replica] = Slot{number, backup, server, ServerState::kMaint};
  return Status::Ok();
}

Status Traffic::Adopt(const std::map<std::string, std::pair<std::string, Role>>& replicas) {
  ASSIGN_OR_RETURN(std::vector<ServerStats> stats, api_.Stats(backend_));
  for (const ServerStats& s : stats) {
    if (s.name.size() < 2 || (s.name[0] != 'r' && s.name[0] != 'b')) continue;
    const bool backup = s.name[0] == 'b';
    const int number = std::atoi(s.name.c_str() + 1);
    std::vector<bool>& pool = backup ? free_backup_ : free_;
    if (number < 1 || number > static_cast<int>(pool.size())) continue;
    const bool maint = s.status.rfind("MAINT", 0) == 0;
    auto it = replicas.find(s.addr);
    if (it == replicas.end() || (it->second.second != Role::kPreferred) != backup || slots_.count(it->second.first)) {
      if (!maint) RETURN_IF_ERROR(api_.SetState(backend_, s.name, ServerState::kMaint));
      continue;
    }
    pool[static_cast<size_t>(number - 1)] = false;
    slots_[it->second.first] = Slot{number, backup, s.name,
                                    maint ? ServerState::kMaint
                                    : s.status.rfind("DRAIN", 0) == 0 ? ServerState::kDrain
                                                                      : ServerState::kReady};
  }
  return Status::Ok();
}

Status Traffic::Set(const std::string& replica, ServerState state) {
  auto it = slots_.find(replica);
  if (it == slots_.end()) return NotFound("replica " + replica + " has no slot");
  if (it->second.state == state) return Status::Ok();
  RETURN_IF_ERROR(api_.SetState(backend_, it->second.server, state));
  it->second.state = state;
  return Status::Ok();
}

Status Traffic::Admit(const std::string& replica) { return Set(replica, ServerState::kReady); }
Status Traffic::Drain(const std::string& replica) { return Set(replica, ServerState::kDrain); }

Status Traffic::Remove(const std::string& replica) {
  auto it = slots_.find(replica);
  if (it == slots_.end()) return Status::Ok();
  RETURN_IF_ERROR(api_.SetState(backend_, it->second.server, ServerState::kMaint));
  (it->second.backup ? free_backup_ : free_)[static_cast<size_t>(it->second.number - 1)] = true;
  slots_.erase(it);
  return Status::Ok();
}

Result<int64_t> Traffic::Observe(std::vector<ReplicaView>& replicas, std::map<std::string, ServerStats>* counters) const {
  ASSIGN_OR_RETURN(std::vector<ServerStats> stats, api_.Stats(backend_));
  std::map<std::string, const ServerStats*> by_server;
  int64_t total = 0;
  for (const ServerStats& s : stats) {
    if (s.name == "BACKEND") {
      total = s.requests;
      if (counters) (*counters)[""] = s;
    } else {
      by_server[s.name] = &s;
    }
  }
  for (ReplicaView& r : replicas) {
    auto it = slots_.find(r.id);
    r.in_traffic = it != slots_.end() && it->second.state != ServerState::kMaint;
    r.draining = it != slots_.end() && it->second.state == ServerState::kDrain;
    r.in_flight = 0;
    if (it == slots_.end()) continue;
    if (auto s = by_server.find(it->second.server); s != by_server.end()) {
      r.in_flight = s->second->current_sessions;
      if (counters) (*counters)[r.id] = *s->second;
    }
  }
  return total;
}

}  // namespace causeway::serving
