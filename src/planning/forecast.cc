#include "planning/forecast.h"

#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>

#include "causeway/money.h"
#include "providers/sim/sim_provider.h"

namespace causeway::planning {
namespace {

using scheduler::Transition;

class RunAheadLoop {
 public:
  RunAheadLoop(const Estate& estate, const scheduler::EngineSnapshot& snapshot, Timestamp from,
               const ForecastOptions& options)
      : snapshot_(snapshot), from_(from), options_(options) {
    std::map<std::string, ProviderAdapter*> adapters;
    for (const auto& p : estate.providers) {
      auto s = std::make_unique<sim::SimProvider>(estate, p, 1);
      s->ExpectedTimesOnly();
      adapters[p.name] = s.get();
      by_name_[p.name] = s.get();
      sims_.push_back(std::move(s));
    }
    engine_ = std::make_unique<scheduler::Engine>(estate, adapters);
  }

  Result<Forecast> Run(std::vector<scheduler::JobInput> candidates, const std::vector<std::string>& jobs) {
    f_.as_of = from_;
    f_.horizon = from_ + options_.horizon;
    RETURN_IF_ERROR(Load(std::move(candidates), jobs));
    const auto deadline = std::chrono::steady_clock::now() + options_.budget;
    // `first`: the earliest moment anything could change at the step made
    // at `now` (the first event it takes in; `now` itself when the step
    // was not pushed past its event).
    Timestamp now = from_, first = now;
    while (true) {
      for (auto& s : sims_) s->BackdateLaunchesTo(first);
      for (const Transition& t : engine_->Tick(now)) Observe(t, now, first);
      ++f_.steps;
      if (left_ == 0) break;
      // Steps may run ahead of the attempts they backdate: what counts
      // against the horizon is the next end, not the step.
      auto [event, next] = Next(now);
      if (event > f_.horizon) break;
      if (std::chrono::steady_clock::now() >= deadline) {
        f_.cut_short = true;
        f_.horizon = event;  // nothing changes before the next end
        break;
      }
      first = event;
      now = next;
    }
    for (JobForecast& jf : f_.jobs) {
      if (jf.starts || !jf.waiting.empty()) continue;
      auto ex = engine_->Explain(jf.job);
      jf.waiting = (f_.cut_short ? "would not start before " + FormatRfc3339(f_.horizon) +
                                       " (where the run-ahead got to in its time budget of " +
                                       FormatDuration(options_.budget) + ")"
                                 : "would not start within " + FormatDuration(options_.horizon) + " of " +
                                       FormatRfc3339(f_.as_of)) +
                   (ex && !ex->waiting.empty() ? ": " + ex->waiting : "");
    }
    return std::move(f_);
  }

 private:
  // The snapshot's jobs into the engine, then the candidates; then what is
  // known of each job asked about before anything moves.
  Status Load(std::vector<scheduler::JobInput> candidates, const std::vector<std::string>& jobs) {
    engine_->SeedMonthSpend(snapshot_.now, snapshot_.month_spend);
    engine_->Reserve(snapshot_.jobs.size() + candidates.size());
    for (size_t i = 0; i < jobs.size(); ++i) want_.emplace(jobs[i], i);
    for (const auto& h : snapshot_.jobs) {
      if (want_.count(h.input.id)) run_for_[h.input.id] = sim::ExpectedRun(h.input.spec->sim, h.input.spec->time_limit);
      Status st = h.attempt ? engine_->Restore(h.input, *h.attempt) : engine_->Submit(h.input);
      ++(st.ok() ? f_.held : f_.not_carried);
    }
    for (auto& c : candidates) {
      run_for_[c.id] = sim::ExpectedRun(c.spec->sim, c.spec->time_limit);
      RETURN_IF_ERROR(engine_->Submit(std::move(c)));
    }
    for (const std::string& id : jobs) {
      auto ex = engine_->Explain(id);
      if (!ex) return NotFound("job " + id + " is not scheduled");
      if (ex->state != "pending") return FailedPrecondition("job " + id + " is " + ex->state + " already");
      JobForecast jf;
      jf.job = id;
      jf.queue = ex->queue;
      jf.position = ex->position;
      jf.queued = ex->queued;
      jf.run_for = run_for_[id];
      f_.jobs.push_back(std::move(jf));
    }
    left_ = f_.jobs.size();
    return Status::Ok();
  }

  void Observe(const Transition& t, Timestamp now, Timestamp first) {
    auto w = want_.find(t.job_id);
    if (w == want_.end()) return;
    JobForecast& jf = f_.jobs[w->second];
    if (jf.starts || !jf.waiting.empty()) return;
    if (t.kind == Transition::Kind::kDispatched) {
      // Where the step took in several ends, the attempt starts when its
      // nodes were freed (SimProvider::BackdateLaunchesTo).
      auto sim = by_name_.find(t.placement.provider);
      auto started = sim == by_name_.end() ? std::nullopt : sim->second->StartedAt(t.job_id, t.attempt);
      jf.starts = true;
      jf.start = started.value_or(now);
      jf.precision = now - first;
      jf.placement = t.placement;
      // Priced as the engine prices an attempt: per GPU-hour, times GPUs, times hours.
      auto cost = Money::Scale(Money(t.price_micros, ""), t.gpus * jf.run_for.count(), 3'600'000'000LL);
      jf.cost_micros = cost.ok() ? cost->micros() : 0;
      --left_;
    } else if (t.kind == Transition::Kind::kAbandoned ||
               (t.kind == Transition::Kind::kAttemptEnded && IsTerminal(t.new_state))) {
      jf.waiting = "would never start: " + t.message;
      --left_;
    }
  }

  // The next step: {the next event, the moment the step is made}. An event
  // is the next attempt's end; once the exact steps are spent, the step is
  // made no sooner than the coarse one, taking in every event until then.
  // With nothing running, what waits is held by time alone (a retry's
  // backoff, a spent budget until next month): steps double the time
  // looked ahead, with the month's turn as one of them.
  std::pair<Timestamp, Timestamp> Next(Timestamp now) const {
    std::optional<Timestamp> next;
    for (const auto& s : sims_) {
      auto t = s->NextEventTime();
      if (t && (!next || *t < *next)) next = t;
    }
    const Micros ahead = now - from_;
    if (!next) {
      Timestamp month = scheduler::Engine::MonthStart(scheduler::Engine::MonthStart(now) + std::chrono::hours(24 * 32));
      Timestamp at = std::min(month, now + std::max<Micros>(std::chrono::minutes(1), ahead));
      return {at == month ? at : now + Micros(1), at};  // a backoff may end anywhere before `at`
    }
    Timestamp event = *next;  // may lie before `now`: an attempt backdated by the last step
    Timestamp at = std::max(event, now + Micros(1));
    if (f_.steps > options_.exact_steps) {
      // The share is of the time the events looked ahead, not the steps: a
      // step's attempts start when their nodes were freed, so the steps may
      // run ahead of the events they take in.
      const Micros window(static_cast<int64_t>(static_cast<double>((event - from_).count()) * options_.coarse_share));
      at = std::max(at, event + window);
    }
    return {event, at};
  }

  const scheduler::EngineSnapshot& snapshot_;
  const Timestamp from_;
  const ForecastOptions& options_;
  std::vector<std::unique_ptr<sim::SimProvider>> sims_;
  std::map<std::string, sim::SimProvider*> by_name_;
  std::unique_ptr<scheduler::Engine> engine_;
  Forecast f_;
  std::unordered_map<std::string, size_t> want_;  // job -> index in f_.jobs
  std::unordered_map<std::string, Micros> run_for_;
  size_t left_ = 0;
};

}  // namespace

Result<Forecast> RunAhead(const Estate& estate, const scheduler::EngineSnapshot& snapshot, Timestamp from,
                          std::vector<scheduler::JobInput> candidates, const std::vector<std::string>& jobs,
                          const ForecastOptions& options) {
  RunAheadLoop loop(estate, snapshot, std::max(from, snapshot.now), options);
  return loop.Run(std::move(candidates), jobs);
}

}  // namespace causeway::planning
