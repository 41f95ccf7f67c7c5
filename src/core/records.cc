#include "causeway/records.h"

namespace causeway {
namespace {
constexpr std::pair<JobState, std::string_view> kStateNames[] = {
    {JobState::kPending, "pending"},     {JobState::kAdmitted, "admitted"},
    {JobState::kRunning, "running"},     {JobState::kSucceeded, "succeeded"},
    {JobState::kFailed, "failed"},       {JobState::kCancelled, "cancelled"},
};
}  // namespace

std::string_view JobStateName(JobState s) {
  for (auto [state, name] : kStateNames) {
    if (state == s) return name;
  }
  return "unknown";
}

std::optional<JobState> ParseJobState(std::string_view name) {
  for (auto [state, n] : kStateNames) {
    if (n == name) return state;
  }
  return std::nullopt;
}

bool IsTerminal(JobState s) {
  return s == JobState::kSucceeded || s == JobState::kFailed || s == JobState::kCancelled;
}

}  // namespace causeway
