#include "telemetry/reaper.h"

#include <algorithm>
#include <set>

namespace causeway::telemetry {

bool Reaper::IdleWindow(const std::vector<SampleStore::Point>& points, int64_t now_us, const ReaperPolicy& p,
                        int& max_percent) {
  max_percent = 0;
  const int64_t start = now_us - p.window.count();
  const int64_t gap = p.max_gap.count();
  // The last point at or before the window's start begins the coverage.
  auto first = std::upper_bound(points.begin(), points.end(), start,
                                [](int64_t t, const SampleStore::Point& a) { return t < a.time_us; });
  if (first != points.begin()) --first;
  if (first == points.end() || first->time_us > start + gap) return false;  // not covered from the start
  int64_t previous = first->time_us;
  bool any = false;
  for (auto it = first; it != points.end() && it->time_us <= now_us; ++it) {
    if (it->time_us - previous > gap) return false;  // a hole in the window
    previous = it->time_us;
    if (it->time_us < start) continue;  // before the window: coverage only
    any = true;
    max_percent = std::max(max_percent, static_cast<int>(it->percent));
    if (it->percent >= p.threshold_percent) return false;
  }
  return any && now_us - previous <= gap;
}

const ReaperPolicy* Reaper::PolicyFor(const ActiveAttempt& a) const {
  const ReaperPolicy* chosen = nullptr;
  for (const ReaperPolicy& p : policies_) {
    if (p.team == a.team) {
      chosen = &p;
      break;
    }
    if (p.team.empty() && !chosen) chosen = &p;
  }
  if (!chosen) return nullptr;
  for (const std::string& e : chosen->exempt_labels) {
    size_t eq = e.find('=');
    auto it = a.labels.find(e.substr(0, eq));
    if (it != a.labels.end() && (eq == std::string::npos || it->second == e.substr(eq + 1))) return nullptr;
  }
  return chosen;
}

std::vector<ReaperAction> Reaper::Evaluate(Timestamp now, const std::vector<ActiveAttempt>& running,
                                           const SampleStore& samples) {
  std::vector<ReaperAction> actions;
  const int64_t now_us = ToUnixMicros(now);
  std::set<std::pair<std::string, int>> seen;
  for (const ActiveAttempt& a : running) {
    auto key = std::make_pair(a.job_id, a.attempt);
    seen.insert(key);
    if (cancelled_.count(key)) continue;
    const ReaperPolicy* p = PolicyFor(a);
    if (!p) {
      warned_.erase(key);
      continue;
    }
    std::optional<std::pair<int, int>> idle;  // gpu, max percent
    // An attempt younger than the window is never idle: it has not had a
    // whole window to be idle in (samples stamped before it started are
    // not its own).
    bool young = a.started && now - *a.started < p->window;
    const auto series = young ? std::map<int, const std::vector<SampleStore::Point>*>{}
                              : samples.Attempt(a.job_id, a.attempt);
    for (const auto& [gpu, points] : series) {
      int max_percent = 0;
      if (IdleWindow(*points, now_us, *p, max_percent)) {
        idle = std::make_pair(gpu, max_percent);
        break;
      }
    }
    auto warned = warned_.find(key);
    if (!idle) {
      if (warned != warned_.end()) {
        actions.push_back({ReaperAction::kRecovered, a.job_id, a.attempt, p->name, p->dry_run, 0, 0,
                           "busy again: no GPU idle for the whole window"});
        warned_.erase(warned);
      }
      continue;
    }
    std::string why = "GPU " + std::to_string(idle->first) + " below " + std::to_string(p->threshold_percent) +
                      "% (at most " + std::to_string(idle->second) + "%) for the last " + FormatDuration(p->window);
    if (warned == warned_.end()) {
      warned_[key] = now;
      std::string next = p->cancel ? "; cancelled after " + FormatDuration(p->grace) + " unless it gets busy" : "";
      actions.push_back({ReaperAction::kWarn, a.job_id, a.attempt, p->name, p->dry_run, idle->first, idle->second,
                         why + next, p->window});
    } else if (p->cancel && now - warned->second >= p->grace) {
      actions.push_back({ReaperAction::kCancel, a.job_id, a.attempt, p->name, p->dry_run, idle->first, idle->second,
                         why + ", warned " + FormatDuration(now - warned->second) + " ago",
                         p->window + (now - warned->second)});
      if (!p->dry_run) cancelled_.emplace(key, warned->second);
      warned_.erase(warned);
    }
  }
  for (auto* forget : {&warned_, &cancelled_}) {
    for (auto it = forget->begin(); it != forget->end();) {
      it = seen.count(it->first) ? std::next(it) : forget->erase(it);
    }
  }
  return actions;
}

void Reaper::CancelNotDone(const std::string& job_id, int attempt) {
  auto it = cancelled_.find({job_id, attempt});
  if (it == cancelled_.end()) return;
  warned_[it->first] = it->second;
  cancelled_.erase(it);
}

}  // namespace causeway::telemetry
