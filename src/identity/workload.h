// Causeway as an OpenID Connect issuer for workloads: each job attempt gets
// short-lived signed tokens (sub "job:<id>", the team, owner, project and
// cluster as claims, an audience per target such as sts.amazonaws.com, a
// GCP workload identity pool or Vault), so clouds trust the job through
// workload identity federation instead of static keys inside it.
//
// Keys live in the database (every replica signs with the same ones). The
// newest key signs; rotating makes a new one and keeps publishing the old
// one until every token it signed has expired, so verifiers holding a token
// signed just before a rotation still find its key.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "causeway/estate.h"
#include "causeway/mutex.h"
#include "causeway/store.h"
#include "identity/jwt.h"

namespace causeway::identity {

struct WorkloadToken {
  std::string token;  // a secret while it lives: never log it
  std::string jti;
  std::string kid;
  Timestamp expires_at;
  std::vector<std::string> audiences;
};

class WorkloadIssuer {
 public:
  // `federations` keep each audience to their teams: an audience that
  // federations use is for the teams one of them allows (every team when
  // one of them names none); an audience no federation uses is any team's.
  // So a job holds no token its team's federations would refuse it.
  WorkloadIssuer(const TokenReader& store, WorkloadIdentityConfig config,
                 const std::vector<CloudFederation>& federations);

  // The issuer URL when the estate names none: the server's own address.
  void SetDefaultIssuer(const std::string& url);
  std::string issuer() const;
  const WorkloadIdentityConfig& config() const { return config_; }

  // The unit that makes the first signing key when there is none (nullopt
  // when there are keys already). Run it once at start.
  Result<std::optional<WriteFn>> FirstKeyWrite(Timestamp now);
  // The unit that makes a new signing key and retires the current one from
  // signing (it stays published while tokens it signed may live).
  Result<WriteFn> RotateWrite(Timestamp now, const std::string& actor);

  // /.well-known/openid-configuration and the JWKS it points to.
  nlohmann::json Discovery() const;
  Result<nlohmann::json> Jwks(Timestamp now);

  // The configured audiences a job of `team` may have tokens for.
  std::vector<std::string> AudiencesFor(const std::string& team) const;

  // A token for attempt `attempt` of `job`, running on `cluster`, for
  // `audience` (one of AudiencesFor(job.team); "" for all of them).
  // kPermissionDenied for another audience, or for "" when the team may
  // have none. It expires after the
  // configured lifetime, or when the attempt must end (its spec's
  // time_limit from `started`, the attempt's start; now when not given),
  // whichever is first, but never within a minute.
  Result<WorkloadToken> Mint(const JobRecord& job, int attempt, const std::string& cluster,
                             const std::string& audience, Timestamp now,
                             std::optional<Timestamp> started = std::nullopt);

 private:
  struct Loaded {
    SigningKeyRecord record;
    jwt::SigningKey key;
  };
  Status Reload() REQUIRES(mu_);

  const TokenReader& store_;
  const WorkloadIdentityConfig config_;
  // The audiences federations keep to some teams, and those teams.
  std::map<std::string, std::vector<std::string>> teams_by_audience_;
  mutable Mutex mu_;
  std::string default_issuer_ GUARDED_BY(mu_);
  std::vector<Loaded> keys_ GUARDED_BY(mu_);  // oldest first
  std::chrono::steady_clock::time_point loaded_at_ GUARDED_BY(mu_) {};
};

}  // namespace causeway::identity
