// A service's traffic through its HAProxy: which replica holds which server
// slot, and the controller's admissions, drains and removals carried out
// through the runtime API. The preferred place's replicas take `r` slots,
// the alternate's and degraded ones backup `b` slots (see haproxy.h).
// Not thread-safe: one control loop owns it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "serving/controller.h"
#include "serving/haproxy.h"

namespace causeway::serving {

class Traffic {
 public:
  Traffic(const RuntimeApi& api, std::string backend, int slots, int backup_slots);

  // Gives `replica` (listening on host:port) a free slot, out of traffic
  // until admitted. kResourceExhausted when every slot of its kind is taken.
  Status Place(const std::string& replica, Role role, const std::string& host, uint16_t port);
  // Takes over what an adopted proxy holds: each slot pointed at one of
  // `replicas` (by "host:port") is that replica's again, in the state the
  // proxy has it in; a slot pointed at anything else is taken out of
  // traffic. Call once, before anything else.
  Status Adopt(const std::map<std::string, std::pair<std::string, Role>>& replicas);
  Status Admit(const std::string& replica);
  Status Drain(const std::string& replica);
  // Out of traffic, its slot freed (call once it answers nothing).
  Status Remove(const std::string& replica);
  bool Has(const std::string& replica) const { return slots_.count(replica) > 0; }

  // Fills in what the proxy knows of each replica it holds (in_traffic,
  // draining, in_flight), and returns every request the backend has taken
  // (its counter, for the request rate). With `counters`, also each
  // replica's slot's counters by replica, and the backend's under "".
  Result<int64_t> Observe(std::vector<ReplicaView>& replicas,
                          std::map<std::string, ServerStats>* counters = nullptr) const;

 private:
  struct Slot {
    int number = 0;
    bool backup = false;
    std::string server;  // SlotName(number, backup): r3, b1
    ServerState state = ServerState::kMaint;
  };
  Status Set(const std::string& replica, ServerState state);

  const RuntimeApi& api_;
  const std::string backend_;
  std::vector<bool> free_, free_backup_;  // by slot number - 1
  std::map<std::string, Slot> slots_;     // by replica
};

}  // namespace causeway::serving
