// OCSF 1.x (the Open Cybersecurity Schema Framework) for Causeway's audit
// trail: the classes Causeway's own events and the providers' imported logs
// are normalized to, and a check of each class's required attributes and
// enum values.
//
// Classes used (class_uid = category_uid * 1000 + the class's uid):
//   1006 Scheduled Job Activity   (System Activity)      job lifecycle
//   3002 Authentication           (Identity & Access)    sign-ins, token use
//   3007 User Management          (Identity & Access)    users created, disabled, deleted
//   6003 API Activity             (Application Activity) every other API call
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "causeway/records.h"
#include "causeway/status.h"

namespace causeway::audit::ocsf {

inline constexpr std::string_view kSchemaVersion = "1.3.0";

inline constexpr int kScheduledJobActivity = 1006;
inline constexpr int kAuthentication = 3002;
inline constexpr int kUserManagement = 3007;
inline constexpr int kApiActivity = 6003;

// status_id
inline constexpr int kStatusUnknown = 0;
inline constexpr int kStatusSuccess = 1;
inline constexpr int kStatusFailure = 2;
// severity_id
inline constexpr int kSeverityInformational = 1;
inline constexpr int kSeverityLow = 2;
inline constexpr int kSeverityMedium = 3;

// The OCSF event for one of Causeway's own audit events, with the original
// event in raw_data and its chain position in metadata (uid = "causeway:<seq>").
nlohmann::json FromCauseway(const AuditEvent& event, const std::string& region = "");

// kInvalidArgument naming the first attribute an event lacks or has wrong
// for its class: the base event's (class_uid, category_uid, activity_id,
// type_uid = class_uid * 100 + activity_id, severity_id, time,
// metadata.product, metadata.version), and each class's required
// attributes and activity enum.
Status Validate(const nlohmann::json& event);

}  // namespace causeway::audit::ocsf
