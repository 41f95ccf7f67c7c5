// Every check a job spec passes before it is stored, in one place for the
// server's submissions and for `causeway validate --estate`.
#pragma once

#include <string>
#include <vector>

#include "causeway/estate.h"
#include "causeway/job_spec.h"
#include "causeway/status.h"
#include "placement/router.h"
#include "policy/policy.h"

namespace causeway {

// The estate's policies (`chain` may be null), which may amend `spec` (each
// amendment becomes a warning), then the estate (alternatives it cannot
// serve become warnings while another can run), then whether any cluster
// could ever run the job. Policy and estate problems are reported together,
// so a file needs one round trip: kPolicyViolation when a policy is among
// them, else kInvalidArgument. Warnings are appended to `warnings` whatever
// the outcome.
Status CheckSubmission(JobSpec& spec, const policy::Chain* chain, const Estate& estate,
                       const placement::Router& router, const std::string& file, std::vector<Diagnostic>& warnings);

}  // namespace causeway
