// How to reach a Slurm cluster: the `slurm:` block of a cluster whose
// provider is of kind slurm, read by this kind (EstateKind in
// causeway/estate.h).
#pragma once

#include <string>
#include <vector>

#include "causeway/estate.h"

namespace causeway {

struct SlurmSettings final : KindSettings {
  // How Causeway talks to the cluster, in order of preference: "rest"
  // (slurmrestd) and/or "cli" (sbatch, squeue, scancel, sacct); a call that
  // finds one unreachable goes to the next.
  std::vector<std::string> interfaces = {"rest"};
  std::string url;            // rest: slurmrestd, http://host:port
  std::string user;           // rest: the Slurm user jobs are submitted as
  std::string token_file;     // rest: holds the user's JWT (`scontrol token`)...
  std::string token_command;  // ...or a command that prints one
  std::string conf;           // cli: the cluster's slurm.conf (SLURM_CONF), if not the default
  bool accounting = false;    // whether slurmdbd keeps accounting for the cluster
  std::string partition;
  std::string gres_type;   // GRES type name for the pool's GPUs, e.g. h200
  std::string output_dir;  // where job output is written, readable by Causeway
};

}  // namespace causeway

namespace causeway::slurm {

// The estate's view of the slurm kind: its cluster block and how it is read.
EstateKind EstateKindOf();

}  // namespace causeway::slurm
