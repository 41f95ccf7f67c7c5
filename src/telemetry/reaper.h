// The idle reaper: finds attempts that hold GPUs and do nothing with them,
// warns their owners, and after a grace period cancels them.
//
// An attempt is idle under a policy when some GPU of it has every sample of
// the last `window` below `threshold_percent` (dstack's rule), and the
// window is covered: samples reach back to its start and no gap between
// them (or since the last one) is longer than `max_gap`. A window not yet
// covered (a young attempt, a scraper that stopped) never counts as idle.
// Evaluation is pure: it takes the time, the running attempts and their
// samples, and returns what to do; the caller acts and audits.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "causeway/clock.h"
#include "causeway/status.h"
#include "telemetry/samples.h"

namespace causeway::telemetry {

struct ReaperPolicy {
  std::string name;
  std::string team;  // "" = every team
  int threshold_percent = 20;
  Micros window = Micros(30LL * 60 * 1000000);
  Micros grace = Micros(15LL * 60 * 1000000);  // between the warning and the cancel
  bool cancel = true;                           // false: warn only
  bool dry_run = false;                         // decide and report, act on nothing
  Micros max_gap = Micros(2LL * 60 * 1000000);
  // A job with any of these labels is exempt: "key" (any value) or "key=value".
  std::vector<std::string> exempt_labels;
};


struct ReaperAction {
  enum Kind { kWarn, kCancel, kRecovered };
  Kind kind = kWarn;
  std::string job_id;
  int attempt = 0;
  std::string policy;
  bool dry_run = false;
  int gpu = 0;            // the idle GPU
  int max_percent = 0;    // its highest sample in the window
  std::string reason;     // for the owner and the audit trail
  Micros idle_for{0};     // how long it has been idle: the window, plus the time since the warning
};

class Reaper {
 public:
  explicit Reaper(std::vector<ReaperPolicy> policies) : policies_(std::move(policies)) {}

  // What to do at `now`: a warning the first time an attempt is found idle,
  // a cancel once it is still idle `grace` after its warning (or a second
  // warning for a warn-only policy, never), and kRecovered when a warned
  // attempt works again. Attempts no longer running are forgotten. An
  // attempt cancelled (not in a dry run) gets nothing more while it is still
  // seen running: the scheduler stops it a moment later, and until then it
  // is neither warned again nor cancelled twice.
  std::vector<ReaperAction> Evaluate(Timestamp now, const std::vector<ActiveAttempt>& running,
                                     const SampleStore& samples);

  // The policy that applies to a job: the first for its team, else the
  // first for every team; null when none does or the job is exempt.
  const ReaperPolicy* PolicyFor(const ActiveAttempt& a) const;

  // Whether one GPU's points are idle at `now` under `p`; `max_percent` is
  // set to the highest sample in the window.
  // A cancel Evaluate gave was not carried out (its write failed): the
  // attempt is judged again, and cancelled at the next evaluation that
  // still finds it idle.
  void CancelNotDone(const std::string& job_id, int attempt);

  static bool IdleWindow(const std::vector<SampleStore::Point>& points, int64_t now_us, const ReaperPolicy& p,
                         int& max_percent);

 private:
  std::vector<ReaperPolicy> policies_;
  std::map<std::pair<std::string, int>, Timestamp> warned_;     // (job, attempt) -> when warned
  std::map<std::pair<std::string, int>, Timestamp> cancelled_;  // (job, attempt) -> when it had been warned
};

}  // namespace causeway::telemetry
