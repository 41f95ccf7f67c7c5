// People's accounts on clusters kept in memory, for tests of the services
// that keep them in line with the directory (providers/capabilities.h):
// every handle of one Ledger sees the same accounts, as every call to a
// real cluster would.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "providers/capabilities.h"

namespace causeway::testing {

class FakePeopleAccounts final : public providers::PeopleAccounts {
 public:
  // cluster -> user -> accounts
  struct Ledger {
    std::mutex mu;
    std::map<std::string, std::map<std::string, std::set<std::string>>> accounts;
  };

  FakePeopleAccounts(std::string cluster, std::shared_ptr<Ledger> ledger)
      : cluster_(std::move(cluster)), ledger_(std::move(ledger)) {}

  const std::string& cluster() const override { return cluster_; }
  std::string Noun() const override { return "fake user"; }
  // As Slurm names people: the userName before '@'.
  std::string NameOf(const std::string& user) const override { return user.substr(0, user.find('@')); }
  // As Slurm has accounts: the teams the grants submit to.
  std::set<std::string> AccountsFor(const std::vector<providers::PersonGrant>& grants) const override {
    std::set<std::string> teams;
    for (const providers::PersonGrant& g : grants) {
      if (g.submits && !g.team.empty()) teams.insert(g.team);
    }
    return teams;
  }
  Result<std::vector<std::string>> UserAccounts(const std::string& user) override {
    std::lock_guard<std::mutex> lock(ledger_->mu);
    const auto& users = ledger_->accounts[cluster_];
    auto it = users.find(user);
    if (it == users.end()) return std::vector<std::string>{};
    return std::vector<std::string>(it->second.begin(), it->second.end());
  }
  Status EnsureUser(const std::string& user, const std::string& account) override {
    std::lock_guard<std::mutex> lock(ledger_->mu);
    ledger_->accounts[cluster_][user].insert(account);
    return Status::Ok();
  }
  Status RemoveAssociation(const std::string& user, const std::string& account) override {
    std::lock_guard<std::mutex> lock(ledger_->mu);
    ledger_->accounts[cluster_][user].erase(account);
    return Status::Ok();
  }
  Status RemoveUser(const std::string& user) override {
    std::lock_guard<std::mutex> lock(ledger_->mu);
    ledger_->accounts[cluster_].erase(user);
    return Status::Ok();
  }

 private:
  std::string cluster_;
  std::shared_ptr<Ledger> ledger_;
};

}  // namespace causeway::testing
