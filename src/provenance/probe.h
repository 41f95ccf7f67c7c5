// The probe: a few lines of shell a backend runs in an attempt's own
// environment, on each node, before the job's setup, to record what the
// attempt really ran on. It reads what the node exposes (nvidia-smi,
// /proc, /etc/os-release, /sys/class/infiniband, the Python packages of the
// job's environment) and writes one line per fact; a fact it cannot find
// is written as not detected, with the reason. It never fails the job: a
// probe that cannot write, or a tool that hangs (each is given a timeout),
// costs the attempt its facts, never its run.
//
// Lines, one fact each (tab-separated; a fact may repeat, as `gpu` does):
//   +NAME<TAB>VALUE     found
//   -NAME<TAB>REASON    not detected, and why
// The node's file is "$CAUSEWAY_FACTS_FILE.N", N its rank in the gang
// ($SLURM_NODEID, else 0), written whole (a temporary file renamed) so a
// reader never sees half of it. The workspace script adds the code's
// revision (`+code_revision`) once it has the job's workdir.
//
// What the probe wrote is as trustworthy as the node's environment: the
// job's own programs run as the same user and could rewrite it afterwards.
// The record says which facts came from the probe and which the estate
// declared (facts.h).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace causeway::provenance {

// The variable naming the facts file (without the node's ".N").
inline constexpr std::string_view kFactsFileVariable = "CAUSEWAY_FACTS_FILE";

// Bounds on what a node's facts file may hold; more is cut, never read.
inline constexpr size_t kMaxFactsFileBytes = 64 << 10;
inline constexpr size_t kMaxFactValueBytes = 512;
inline constexpr size_t kMaxFactsPerNode = 64;
inline constexpr size_t kMaxGpusPerNode = 64;
// Nodes read of one attempt (a gang larger than this keeps the first ones').
inline constexpr int kMaxProbedNodes = 256;

// The shell run before the job's setup (bash; it defines causeway_probe and
// causeway_code_revision and calls the first).
std::string ProbeScript();

// Shell for the workspace script, run in the job's working directory once
// it is there: records the git commit checked out there, when it is one.
std::string CodeRevisionScript();

// A fact: a value, or why there is none.
struct Fact {
  std::string value;
  std::string not_detected;  // the reason; "" when detected
  bool detected() const { return not_detected.empty(); }
};

// One GPU as nvidia-smi described it.
struct Gpu {
  std::string index, model, uuid, driver, memory_mib;
};

// What the probe found on one node.
struct NodeFacts {
  std::string name;                    // the node's host name (fact `node`)
  std::map<std::string, Fact> facts;   // everything but `node` and `gpu`
  std::vector<Gpu> gpus;
  std::string gpus_not_detected;       // why there are none, when none
};

// Reads a node's facts file. Lines that are not facts are skipped; names
// are lower-case letters, digits and '_' (at most 32), values are cut to
// kMaxFactValueBytes and kept to printable ASCII; the first
// kMaxFactsPerNode names and kMaxGpusPerNode GPUs are kept. Never fails:
// the text is the job's environment's to write, and a bad line costs only
// itself.
NodeFacts ParseProbe(std::string_view text);

}  // namespace causeway::provenance
