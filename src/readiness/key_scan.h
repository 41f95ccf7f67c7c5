// The static cloud credentials in the environment Causeway hands a job:
// its envs (values and names), the names of its secrets, and what its
// cluster injects. A job that carries one is not using workload identity,
// whatever else it has. Findings name the variable and the kind of key,
// never the value.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace causeway::readiness {

struct KeyFinding {
  std::string variable;  // the environment variable or secret name
  std::string kind;      // "AWS access key", "private key", ...
};

std::vector<KeyFinding> ScanForStaticKeys(const std::map<std::string, std::string>& envs,
                                          const std::vector<std::string>& secret_names);

}  // namespace causeway::readiness
