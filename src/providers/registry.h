// Provider kinds by name, as Kueue registers its job integrations: each
// provider folder says what its kind makes (Register in that folder), and
// BuiltInKinds lists the folders. Adding a provider is adding its folder and
// one line in kinds.cc; the scheduler and the other services only look kinds
// up here.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/estate.h"
#include "causeway/provider.h"
#include "providers/capabilities.h"

namespace causeway::providers {

// What a provider of the estate is made from.
struct Context {
  const Estate& estate;
  const Provider& provider;
  uint64_t seed = 0;  // for simulated behaviour: the same seed replays the same run
};

struct Kind {
  // The adapter that drives the provider's clusters. Required.
  std::function<std::unique_ptr<ProviderAdapter>(const Context&)> adapter;
  // The per-person accounts of the provider's clusters, for those that keep
  // them; unset when the kind keeps none.
  std::function<std::vector<std::unique_ptr<PeopleAccounts>>(const Context&)> people_accounts;
  // Whether its attempts run nothing real: they get no credentials.
  bool simulated = false;
  // Whether its adapter never keeps a caller waiting: it works in memory,
  // or sends its backend's calls through workers of its own (Slurm). The
  // scheduler calls such an adapter directly; any other it calls through a
  // dispatch::OffLockAdapter, so that a kind added later cannot hold up the
  // scheduler however its backend behaves.
  bool answers_at_once = false;
  // What the estate's entries of this kind may say (the blocks of its
  // providers and clusters, and how they are read); the name is filled in
  // at registration.
  EstateKind estate;
};

class Registry {
 public:
  // Registers `kind` under `name`. kAlreadyExists when the name is taken:
  // two folders claiming one kind is a mistake to catch at start, not a
  // silent replacement.
  [[nodiscard]] Status Register(std::string name, Kind kind);
  // Registers `kind` under `name`, replacing what was there (a test's fake
  // in place of a built-in kind): only where the replacement is meant.
  void Replace(std::string name, Kind kind);
  // The kind named `name`, or nullptr.
  const Kind* Find(std::string_view name) const;
  std::vector<std::string> Names() const;
  // What an estate may name: every registered kind, with its blocks.
  EstateKinds Estate() const;

 private:
  std::map<std::string, Kind, std::less<>> kinds_;
};

// The kinds this build has (sim, local, slurm, kubernetes).
const Registry& BuiltInKinds();

// ParseEstate and LoadEstateFile (causeway/estate.h) with the kinds of
// `kinds`: what the server, the CLI and the tools read estates with.
Result<causeway::Estate> ParseEstate(std::string_view yaml_text, const std::string& file,
                                     const Registry& kinds = BuiltInKinds());
Result<causeway::Estate> LoadEstateFile(const std::string& path, const Registry& kinds = BuiltInKinds());

}  // namespace causeway::providers
