// The two AWS calls the secret broker makes, each one request through a
// net::Fetcher with a deadline: STS AssumeRoleWithWebIdentity (the
// attempt's workload token for a role's temporary credentials; unsigned, as
// AWS's SDKs send it) and Secrets Manager GetSecretValue, signed with those
// credentials (Signature Version 4).
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "causeway/clock.h"
#include "causeway/status.h"
#include "net/fetch.h"

namespace causeway::secrets {

// Temporary credentials for one role session. Held in memory for the
// reads of one attempt, never written anywhere.
struct AwsCredentials {
  std::string access_key_id, secret_access_key, session_token;
  ~AwsCredentials();  // wipes them
};

// One request to sign: everything SigV4 covers.
struct AwsRequest {
  std::string method = "POST";
  std::string host;  // as sent in Host (with ":PORT" when not the scheme's)
  std::string path = "/";
  std::string query;  // canonical already ("" for none)
  std::vector<std::pair<std::string, std::string>> headers;  // besides host and x-amz-date
  std::string body;
};

// The headers that sign `r` for `service` in `region` at `now` (SigV4:
// Authorization, X-Amz-Date, X-Amz-Security-Token when the credentials
// have a session token, and Host), to send with r's own headers.
std::vector<std::pair<std::string, std::string>> SignV4(const AwsRequest& r, const AwsCredentials& creds,
                                                        const std::string& region, const std::string& service,
                                                        Timestamp now);

// AssumeRoleWithWebIdentity at `sts_endpoint` ("" : AWS's global one).
// Errors name the endpoint, the role and AWS's error code and message;
// never the token.
Result<AwsCredentials> AssumeRoleWithWebIdentity(net::Fetcher& net, const std::string& sts_endpoint,
                                                 const std::string& role_arn, const std::string& session_name,
                                                 const std::string& token, std::chrono::milliseconds timeout);

// GetSecretValue of `secret_id` from Secrets Manager at `endpoint`: its
// SecretString. kFailedPrecondition for a secret that holds binary data;
// errors carry AWS's error type (ResourceNotFoundException,
// AccessDeniedException) and never any of the value.
Result<std::string> GetSecretString(net::Fetcher& net, const std::string& endpoint, const std::string& region,
                                    const AwsCredentials& creds, const std::string& secret_id, Timestamp now,
                                    std::chrono::milliseconds timeout);

}  // namespace causeway::secrets
