#include "service/submission_check.h"

namespace causeway {

Status CheckSubmission(JobSpec& spec, const policy::Chain* chain, const Estate& estate,
                       const placement::Router& router, const std::string& file, std::vector<Diagnostic>& warnings) {
  Status policies;
  if (chain) {
    std::vector<std::string> changes;
    policies = chain->Apply(spec, changes);
    for (auto& c : changes) warnings.push_back(Diagnostic{file, 0, 0, "", std::move(c), true});
  }
  Status fits = CheckJobAgainstEstate(spec, estate, file, &warnings);
  if (policies.ok() && fits.ok()) return placement::CheckFeasible(router, spec, file);
  if (fits.ok()) return policies;
  if (policies.ok()) return fits;
  std::vector<Diagnostic> all;
  for (const auto* st : {&policies, &fits}) {
    for (Diagnostic d : st->diagnostics()) {
      if (d.file.empty()) d.file = file;
      all.push_back(std::move(d));
    }
  }
  std::string message = std::to_string(all.size()) + " problems; first: " + all.front().message;
  return PolicyViolation(std::move(message), std::move(all));
}

}  // namespace causeway
