// Backend tests stand in for the scheduler's engine and its launch record
// (causeway/launch.h): they hold a launch and release it directly.
#pragma once

#include <map>
#include <string>

#include "causeway/launch.h"

namespace causeway {

struct LaunchTestPeer {
  // A launch as if its held launch had been recorded with `env`.
  static RecordedLaunch Recorded(const std::string& job_id, int attempt, std::map<std::string, std::string> env = {}) {
    return RecordedLaunch(HeldLaunch(job_id, attempt, ""), std::move(env));
  }
};

}  // namespace causeway
