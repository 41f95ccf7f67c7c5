#include "providers/slurm/slurm_accounts.h"

namespace causeway::slurm {

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
