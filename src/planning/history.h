// The company's own history as a trace (`causeway plan trace
// --from-history --since 90d`): every job the ledger holds that was
// submitted in the window, with its recorded spec, submission time,
// attempts and outcome.
#pragma once

#include "causeway/clock.h"
#include "causeway/store.h"
#include "planning/trace.h"

namespace causeway::planning {

// Jobs submitted in [since, until), oldest first, at most limits.max_jobs
// (the newest kept). A job's run time is its successful attempt's, else its
// last ended attempt's, else (nothing ended yet) its spec's `sim.duration`
// hint; it keeps its final state. Pipeline steps keep the step they run after; job groups'
// tasks are replayed one by one (noted).
Result<Trace> ReadHistory(const Store& store, Timestamp since, Timestamp until, const TraceLimits& limits = {});

}  // namespace causeway::planning
