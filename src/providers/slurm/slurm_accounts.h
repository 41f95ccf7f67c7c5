// People's accounting users on a Slurm cluster with accounting (slurmdbd),
// through sacctmgr: the PeopleAccounts capability of the slurm kind.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "causeway/estate.h"
#include "providers/capabilities.h"
#include "providers/slurm/slurm_cli.h"
#include "providers/slurm/slurm_settings.h"

namespace causeway::slurm {

class SlurmAccounts final : public providers::PeopleAccounts {
 public:
  // sacctmgr calls are made while a SCIM request waits: one that does not
  // answer within `timeout` fails its step instead of holding the IdP up.
  SlurmAccounts(std::string cluster, const SlurmSettings& settings,
                std::chrono::milliseconds timeout = std::chrono::milliseconds(10'000))
      : cluster_(std::move(cluster)), cli_(settings.conf, timeout) {}

  const std::string& cluster() const override { return cluster_; }
  std::string Noun() const override { return "Slurm user"; }
  // The POSIX name: the userName before '@', lower case.
  std::string NameOf(const std::string& user) const override;
  // The accounts of the teams the grants submit to (a grant for every team
  // makes none: Slurm accounts are per team).
  std::set<std::string> AccountsFor(const std::vector<providers::PersonGrant>& grants) const override;
  Result<std::vector<std::string>> UserAccounts(const std::string& user) override { return cli_.UserAccounts(user); }
  Status EnsureUser(const std::string& user, const std::string& account) override {
    return cli_.EnsureUser(user, account);
  }
  Status RemoveAssociation(const std::string& user, const std::string& account) override {
    return cli_.RemoveUser(user, account);
  }
  Status RemoveUser(const std::string& user) override { return cli_.RemoveUser(user); }

  // One for each cluster of `provider` whose Slurm keeps accounting.
  static std::vector<std::unique_ptr<providers::PeopleAccounts>> ForProvider(const Estate& estate,
                                                                             const Provider& provider);

 private:
  std::string cluster_;
  SlurmCli cli_;
};

}  // namespace causeway::slurm
