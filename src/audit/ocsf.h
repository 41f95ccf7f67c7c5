// OCSF 1.x (the Open Cybersecurity Schema Framework) for Causeway's audit
// trail: the classes Causeway's own events and the providers' imported logs
// are normalized to, and a check of each class's required attributes and
// enum values.
//
// Classes used (class_uid = category_uid * 1000 + the class's uid):
//   1006 Scheduled Job Activity   (System Activity)      job lifecycle
//   3001 Account Change           (Identity & Access)    accounts created, enabled, disabled,
//                                                        deleted; policies attached to them
//   3002 Authentication           (Identity & Access)    sign-ins, token use
//   3005 User Access Management   (Identity & Access)    privileges granted to or revoked from
//                                                        a principal (an IAM policy's bindings)
//   3006 Group Management         (Identity & Access)    groups made and deleted, members
//                                                        added and removed
//   6003 API Activity             (Application Activity) every other API call
// Each exists in the schema version declared (kSchemaVersion).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "causeway/records.h"
#include "causeway/status.h"

namespace causeway::audit::ocsf {

inline constexpr std::string_view kSchemaVersion = "1.3.0";

inline constexpr int kScheduledJobActivity = 1006;
inline constexpr int kAccountChange = 3001;
inline constexpr int kAuthentication = 3002;
inline constexpr int kUserAccess = 3005;
inline constexpr int kGroupManagement = 3006;
inline constexpr int kApiActivity = 6003;

// Account Change activity_id
inline constexpr int kAccountCreate = 1;
inline constexpr int kAccountEnable = 2;
inline constexpr int kAccountPasswordChange = 3;
inline constexpr int kAccountPasswordReset = 4;
inline constexpr int kAccountDisable = 5;
inline constexpr int kAccountDelete = 6;
inline constexpr int kAccountAttachPolicy = 7;
inline constexpr int kAccountDetachPolicy = 8;
inline constexpr int kAccountLock = 9;
inline constexpr int kAccountMfaEnable = 10;
inline constexpr int kAccountMfaDisable = 11;
// Group Management activity_id
inline constexpr int kGroupAssignPrivileges = 1;
inline constexpr int kGroupRevokePrivileges = 2;
inline constexpr int kGroupAddUser = 3;
inline constexpr int kGroupRemoveUser = 4;
inline constexpr int kGroupDelete = 5;
inline constexpr int kGroupCreate = 6;
// User Access Management activity_id
inline constexpr int kAccessAssign = 1;
inline constexpr int kAccessRevoke = 2;
inline constexpr int kOther = 99;

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
