#include "providers/slurm/slurm_accounts.h"

#include <algorithm>
#include <cctype>

namespace causeway::slurm {

std::string SlurmAccounts::NameOf(const std::string& user) const {
  std::string name = user.substr(0, user.find('@'));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  bool valid = !name.empty() && name.size() <= 32 && std::isalpha(static_cast<unsigned char>(name[0])) &&
               std::all_of(name.begin(), name.end(), [](unsigned char c) {
                 return std::isalnum(c) || c == '-' || c == '_' || c == '.';
               });
  return valid ? name : "";
}

std::set<std::string> SlurmAccounts::AccountsFor(const std::vector<providers::PersonGrant>& grants) const {
  std::set<std::string> teams;
  for (const providers::PersonGrant& g : grants) {
    if (g.submits && !g.team.empty()) teams.insert(g.team);
  }
  return teams;
}

std::vector<std::unique_ptr<providers::PeopleAccounts>> SlurmAccounts::ForProvider(const Estate& estate,
                                                                                   const Provider& provider) {
  std::vector<std::unique_ptr<providers::PeopleAccounts>> out;
  for (const Cluster& c : estate.clusters) {
    const SlurmSettings* settings = SettingsAs<SlurmSettings>(c);
    if (c.provider == provider.name && settings && settings->accounting) {
      out.push_back(std::make_unique<SlurmAccounts>(c.name, *settings));
    }
  }
  return out;
}

}  // namespace causeway::slurm
