// Where exported audit events go, one OCSF event (JSON text) each: a SIEM's
// HTTP collector (OCSF JSON lines), a syslog server (RFC 5424 over TCP with
// RFC 6587 octet counting, TLS optional), or local files rotated by size.
// A batch is delivered whole or reported failed; the exporter then sends it
// again, so delivery is at least once.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "causeway/status.h"

namespace causeway::net {
class Fetcher;
}

namespace causeway::audit {

class Sink {
 public:
  virtual ~Sink() = default;
  // kUnavailable (worth retrying) or kInvalidArgument / kPermissionDenied
  // (the receiver refuses: retrying will not help).
  virtual Status Send(const std::vector<std::string>& events) = 0;
  // Where it sends, for messages; never a credential.
  virtual std::string Describe() const = 0;
};

struct SinkOptions {
  std::string url;           // http(s)://..., tcp://host:port, tls://host:port, or file:PATH
  std::string bearer_token;  // HTTP: sent as Authorization: Bearer (a secret: never logged)
  std::string ca_file;       // TLS: trust this CA (PEM) besides the system's
  int64_t rotate_bytes = 100 << 20;  // file: start a new file past this size
  int keep = 10;                     // file: rotated files kept (PATH.1 ... PATH.keep)
  // HTTP and syslog: the most one batch may take to be sent (connecting,
  // TLS, writing, reading the answer); the call then fails as unavailable.
  std::chrono::milliseconds timeout{30'000};
  // HTTP: what carries the batches; the network when null (a test's fake
  // otherwise, which must outlive the sink).
  net::Fetcher* http = nullptr;
};

// kInvalidArgument for a URL of no known kind, naming the kinds.
Result<std::unique_ptr<Sink>> OpenSink(const SinkOptions& options);

// One event as an RFC 5424 syslog message (facility 13, log audit; the
// severity from the event's severity_id; MSGID "ocsf-<class_uid>"; the
// event as the message), framed with its length (RFC 6587).
std::string SyslogFrame(const std::string& event, const std::string& hostname);

}  // namespace causeway::audit
