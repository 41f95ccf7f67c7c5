// A replica's readiness probe, as SkyPilot Serve sends it: GET the path (or
// POST `post_data` as JSON) with the spec's headers; ready when it answers
// 200 within `timeout_seconds`. The deadline covers connecting, sending and
// the whole answer, however the replica behaves.
#pragma once

#include <cstdint>
#include <string>

#include "causeway/clock.h"
#include "spec/service_spec.h"

namespace causeway::serving {

struct ProbeResult {
  bool ok = false;
  int status = 0;      // the HTTP status (0: no answer)
  Micros took{0};
  std::string error;   // why not, when not ok (never a header's value)
};

ProbeResult Probe(const std::string& host, uint16_t port, const spec::ReadinessProbe& probe);

}  // namespace causeway::serving
