#include "provenance/probe.h"

#include <algorithm>

namespace causeway::provenance {

std::string ProbeScript() {
  // Single quotes only around the Python program (which has none inside);
  // every tool that could hang is under `timeout`.
  return R"sh(causeway_fact() { printf '%s\t%s\n' "$1" "$(printf '%s' "$2" | tr '\t\r\n' '   ' | head -c 512)"; }
causeway_probe() {
  [ -n "${CAUSEWAY_FACTS_FILE:-}" ] || return 0
  local out="$CAUSEWAY_FACTS_FILE.${SLURM_NODEID:-0}" v
  {
    causeway_fact +node "$(hostname 2>/dev/null || cat /proc/sys/kernel/hostname 2>/dev/null)"
    causeway_fact +kernel "$(uname -sr 2>/dev/null)"
    if [ -r /etc/os-release ]; then causeway_fact +os "$(. /etc/os-release; echo "${PRETTY_NAME:-$NAME $VERSION_ID}")"
    else causeway_fact -os "/etc/os-release is not readable"; fi
    causeway_fact +cpu "$(nproc 2>/dev/null) x $(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1)"
    causeway_fact +memory_mb "$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo 2>/dev/null)"
    if [ -n "${CUDA_VISIBLE_DEVICES+set}" ] && [ -z "$CUDA_VISIBLE_DEVICES" ]; then
      causeway_fact -gpu "the attempt was given no GPU (CUDA_VISIBLE_DEVICES is empty)"
      causeway_fact -cuda "the attempt was given no GPU"
    elif ! command -v nvidia-smi >/dev/null 2>&1; then
      causeway_fact -gpu "nvidia-smi is not on the PATH of the job's environment: no NVIDIA driver found on this node"
      causeway_fact -cuda "no NVIDIA driver found on this node (nvidia-smi is not on the PATH)"
    else
      if v=$(timeout 20 nvidia-smi --query-gpu=index,name,uuid,driver_version,memory.total --format=csv,noheader,nounits ${CUDA_VISIBLE_DEVICES:+-i "$CUDA_VISIBLE_DEVICES"} 2>&1); then
        printf '%s\n' "$v" | head -n 64 | while IFS= read -r line; do causeway_fact +gpu "$line"; done
      else
        causeway_fact -gpu "nvidia-smi failed or took over 20 s: $v"
      fi
      v=$(timeout 20 nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9][0-9.]*\).*/\1/p' | head -n 1)
      if [ -n "$v" ]; then causeway_fact +cuda "$v"; else causeway_fact -cuda "nvidia-smi names no CUDA version"; fi
    fi
    if v=$(timeout 20 nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9][0-9.]*\).*/\1/p' | head -n 1) && [ -n "$v" ]; then
      causeway_fact +cuda_toolkit "$v"
    else
      causeway_fact -cuda_toolkit "nvcc is not on the PATH of the job's environment"
    fi
    if [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
      causeway_fact +interconnect infiniband
      causeway_fact +infiniband_devices "$(ls /sys/class/infiniband 2>/dev/null | tr '\n' ' ')"
    else
      causeway_fact +interconnect "ethernet (no InfiniBand device in /sys/class/infiniband)"
    fi
    if [ -f /.dockerenv ] || [ -f /run/.containerenv ]; then
      causeway_fact -image "the attempt ran in a container whose image is not named inside it"
    else
      causeway_fact -image "the attempt ran on the node's own operating system, in no container image"
    fi
    if command -v python3 >/dev/null 2>&1; then
      timeout 60 python3 -c '
import importlib.util
def fact(name, value, why):
    print(("+%s\t%s" % (name, value)) if value else ("-%s\t%s" % (name, why)))
if importlib.util.find_spec("torch") is None:
    for name in ("torch", "torch_cuda", "cudnn", "nccl"):
        fact(name, None, "torch is not importable by python3 in the environment of the job")
else:
    import torch
    fact("torch", torch.__version__, "")
    fact("torch_cuda", torch.version.cuda, "this torch is built without CUDA")
    try:
        fact("cudnn", torch.backends.cudnn.version(), "this torch has no cuDNN")
    except Exception as e:
        fact("cudnn", None, "asking torch failed: %s" % e)
    try:
        fact("nccl", ".".join(str(p) for p in torch.cuda.nccl.version()), "")
    except Exception as e:
        fact("nccl", None, "this torch has no NCCL: %s" % e)
' 2>/dev/null || causeway_fact -torch "python3 failed or took over 60 s when asked for torch"
    else
      causeway_fact -torch "python3 is not on the PATH of the job's environment"
    fi
  } > "$out.tmp" 2>/dev/null && mv -f "$out.tmp" "$out" 2>/dev/null
}
causeway_probe || true
)sh";
}

std::string CodeRevisionScript() {
  return R"sh(if [ -n "${CAUSEWAY_FACTS_FILE:-}" ]; then
  if causeway_rev=$(git rev-parse HEAD 2>/dev/null); then printf '+code_revision\t%s\n' "$causeway_rev"
  else printf -- '-code_revision\tthe working directory of the job is not a git checkout\n'; fi >> "$CAUSEWAY_FACTS_FILE.${SLURM_NODEID:-0}" 2>/dev/null || true
fi
)sh";
}

namespace {

bool IsName(std::string_view s) {
  if (s.empty() || s.size() > 32) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

// Printable ASCII only (anything else would need checking as UTF-8 before
// it could be JSON), cut, trimmed.
std::string Clean(std::string_view v) {
  std::string out;
  for (char c : v.substr(0, kMaxFactValueBytes)) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) out += c;
  }
  size_t b = out.find_first_not_of(' '), e = out.find_last_not_of(' ');
  return b == std::string::npos ? "" : out.substr(b, e - b + 1);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// "0, NVIDIA H100 80GB HBM3, GPU-…, 550.54.15, 81559"
Gpu ParseGpu(const std::string& line) {
  std::vector<std::string_view> parts;
  std::string_view rest(line);
  for (size_t comma; (comma = rest.find(',')) != std::string_view::npos && parts.size() < 4;) {
    parts.push_back(Trim(rest.substr(0, comma)));
    rest.remove_prefix(comma + 1);
  }
  parts.push_back(Trim(rest));
  parts.resize(5);
  return Gpu{std::string(parts[0]), std::string(parts[1]), std::string(parts[2]), std::string(parts[3]),
             std::string(parts[4])};
}

}  // namespace

NodeFacts ParseProbe(std::string_view text) {
  NodeFacts node;
  text = text.substr(0, kMaxFactsFileBytes);
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    size_t tab = line.find('\t');
    if (line.size() < 2 || (line[0] != '+' && line[0] != '-') || tab == std::string_view::npos) continue;
    std::string_view name = line.substr(1, tab - 1);
    if (!IsName(name)) continue;
    std::string value = Clean(line.substr(tab + 1));
    bool found = line[0] == '+';
    if (name == "node") {
      if (found && node.name.empty()) node.name = value;
    } else if (name == "gpu") {
      if (found && node.gpus.size() < kMaxGpusPerNode && !value.empty()) node.gpus.push_back(ParseGpu(value));
      if (!found && node.gpus_not_detected.empty()) node.gpus_not_detected = value.empty() ? "not detected" : value;
    } else if (node.facts.count(std::string(name)) || node.facts.size() < kMaxFactsPerNode) {
      Fact& f = node.facts[std::string(name)];
      if (found && !value.empty()) {
        f = Fact{value, ""};
      } else if (!f.detected() || f.value.empty()) {  // a value found is not undone by a later miss
        f = Fact{"", found || value.empty() ? "the probe found an empty value" : value};
      }
    }
  }
  // The driver is each GPU's; it is one fact of the node.
  if (!node.facts.count("driver")) {
    if (!node.gpus.empty() && !node.gpus.front().driver.empty()) {
      node.facts["driver"] = Fact{node.gpus.front().driver, ""};
    } else {
      node.facts["driver"] = Fact{"", node.gpus_not_detected.empty() ? "no GPU was found" : node.gpus_not_detected};
    }
  }
  if (node.gpus.empty() && node.gpus_not_detected.empty()) node.gpus_not_detected = "the probe reported no GPU";
  return node;
}

}  // namespace causeway::provenance
