#include "recovery/recovery.h"

#include <algorithm>
#include <cctype>

namespace causeway::recovery {
namespace {

constexpr std::pair<FailureClass, std::string_view> kNames[] = {
    {FailureClass::kNone, "none"},
    {FailureClass::kPreemption, "preemption"},
    {FailureClass::kNodeFault, "node_fault"},
    {FailureClass::kOutOfMemory, "out_of_memory"},
    {FailureClass::kTimeout, "timeout"},
    {FailureClass::kStorageFull, "storage_full"},
    {FailureClass::kDataPath, "data_path"},
    {FailureClass::kProviderOutage, "provider_outage"},
    {FailureClass::kUserError, "user_error"},
    {FailureClass::kCancelled, "cancelled"},
};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool Has(const std::string& haystack, std::string_view needle) { return haystack.find(needle) != std::string::npos; }

// The code of the first NVIDIA XID error in `text` (lower case): "xid", then
// up to 12 other characters (": ", " (pci:0000:3b:00): "), then 1-3 digits.
std::optional<std::string> FindXid(const std::string& text) {
  for (size_t at = text.find("xid"); at != std::string::npos; at = text.find("xid", at + 3)) {
    size_t i = at + 3, skipped = 0;
    while (i < text.size() && !std::isdigit(static_cast<unsigned char>(text[i])) && skipped < 12) ++i, ++skipped;
    // PCI addresses hold digits too: skip a parenthesised address whole.
    if (i < text.size() && text.compare(at + 3, 6, " (pci:") == 0) {
      size_t close = text.find(')', at);
      if (close == std::string::npos) continue;
      i = close + 1;
      while (i < text.size() && !std::isdigit(static_cast<unsigned char>(text[i])) && i - close < 6) ++i;
    }
    size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && i - start < 3) ++i;
    if (i > start) return text.substr(start, i - start);
  }
  return std::nullopt;
}

}  // namespace

std::string_view FailureClassName(FailureClass c) {
  for (auto [cls, name] : kNames) {
    if (cls == c) return name;
  }
  return "unknown";
}

std::optional<FailureClass> ParseFailureClass(std::string_view name) {
  for (auto [cls, n] : kNames) {
    if (n == name) return cls;
  }
  return std::nullopt;
}

std::string_view OwnerName(Owner o) {
  switch (o) {
    case Owner::kNobody: return "nobody";
    case Owner::kResearcher: return "researcher";
    case Owner::kPlatform: return "platform";
    case Owner::kProvider: return "provider";
  }
  return "nobody";
}

Owner OwnerOf(FailureClass c) {
  switch (c) {
    case FailureClass::kNodeFault:
    case FailureClass::kProviderOutage: return Owner::kProvider;
    case FailureClass::kStorageFull:
    case FailureClass::kDataPath: return Owner::kPlatform;
    case FailureClass::kOutOfMemory:
    case FailureClass::kTimeout:
    case FailureClass::kUserError: return Owner::kResearcher;
    case FailureClass::kNone:
    case FailureClass::kPreemption:
    case FailureClass::kCancelled: return Owner::kNobody;
  }
  return Owner::kNobody;
}

Classification Classify(AttemptOutcome outcome, int exit_code, const std::string& reason, const std::string& log_tail) {
  std::string text = Lower(reason + "\n" + log_tail);
  // NVIDIA XID errors name a GPU fault whatever the exit looked like.
  std::optional<std::string> xid = FindXid(text);
  switch (outcome) {
    case AttemptOutcome::kSucceeded: return {FailureClass::kNone, Owner::kNobody, ""};
    case AttemptOutcome::kPreempted: return {FailureClass::kPreemption, Owner::kNobody, reason};
    case AttemptOutcome::kProviderOutage: return {FailureClass::kProviderOutage, Owner::kProvider, reason};
    case AttemptOutcome::kCancelled: return {FailureClass::kCancelled, Owner::kNobody, reason};
    case AttemptOutcome::kTimeout: return {FailureClass::kTimeout, Owner::kResearcher, reason};
    case AttemptOutcome::kNodeFailure:
      return {FailureClass::kNodeFault, Owner::kProvider, xid ? "NVIDIA XID " + *xid : reason};
    case AttemptOutcome::kFailed: break;
  }
  if (xid) return {FailureClass::kNodeFault, Owner::kProvider, "NVIDIA XID " + *xid};
  if (Has(text, "out of memory") || Has(text, "out_of_memory") || Has(text, "oom-kill") || Has(text, "oom_kill")) {
    return {FailureClass::kOutOfMemory, Owner::kResearcher, "out of memory"};
  }
  if (Has(text, "no space left on device") || Has(text, "disk quota exceeded")) {
    return {FailureClass::kStorageFull, Owner::kPlatform, "no space left on device"};
  }
  if (Has(text, "input/output error") || Has(text, "stale file handle") ||
      Has(text, "transport endpoint is not connected") || Has(text, "connection reset by peer")) {
    return {FailureClass::kDataPath, Owner::kPlatform, "I/O error on the data path"};
  }
  return {FailureClass::kUserError, Owner::kResearcher, "the program exited with code " + std::to_string(exit_code)};
}

Policy PolicyFor(const JobSpec& spec) {
  Policy p;
  if (spec.recovery.max_restarts) p.max_restarts = *spec.recovery.max_restarts;
  if (spec.recovery.backoff) p.backoff = *spec.recovery.backoff;
  if (spec.recovery.on) {
    p.retry_on.clear();
    for (const auto& name : *spec.recovery.on) {
      if (auto c = ParseFailureClass(name)) p.retry_on.insert(*c);
    }
  }
  return p;
}

Decision Decide(const Policy& policy, const Classification& c, int attempts) {
  Decision d;
  std::string cls(FailureClassName(c.failure));
  if (c.failure == FailureClass::kNone || c.failure == FailureClass::kCancelled) {
    d.why = c.failure == FailureClass::kNone ? "succeeded" : "cancelled: not retried";
    return d;
  }
  if (!policy.retry_on.count(c.failure)) {
    d.why = cls + " is not retried by this job's recovery policy";
    return d;
  }
  int restarts = attempts - 1;
  if (restarts >= policy.max_restarts) {
    d.why = cls + ": gave up after " + std::to_string(attempts) + " attempts (max_restarts " +
            std::to_string(policy.max_restarts) + ")";
    return d;
  }
  d.retry = true;
  d.wait = policy.backoff * (1LL << std::min(restarts, 10));
  d.why = cls + ": restart " + std::to_string(restarts + 1) + " of " + std::to_string(policy.max_restarts) +
          (d.wait.count() > 0 ? " after " + FormatDuration(d.wait) : "");
  return d;
}

}  // namespace causeway::recovery
