#include "audit/importers/importer.h"

#include "causeway/crypto.h"

#include <utility>

namespace causeway::audit::detail {

namespace {

// How a CloudTrail call ended. errorCode is the usual sign of a failure;
// a console sign-in instead says "Failure" in responseElements.ConsoleLogin
// and gives only errorMessage ("Failed authentication").
int Outcome(dom::element r, std::string_view error) {
  if (!error.empty() || !Field(r, "errorMessage").empty()) return ocsf::kStatusFailure;
  dom::element response;
  if (!r["responseElements"].get(response) && response.type() == dom::element_type::OBJECT) {
    for (const char* key : {"ConsoleLogin", "SwitchRole", "CredentialChallenge", "CredentialVerification"}) {
      std::string_view v = Field(response, key);
      if (v == "Failure") return ocsf::kStatusFailure;
      if (v == "Success") return ocsf::kStatusSuccess;
    }
  }
  return ocsf::kStatusSuccess;  // CloudTrail records a call that raised no error
}

bool IsSignIn(std::string_view event_type, std::string_view name) {
  return event_type == "AwsConsoleSignIn" || name == "ConsoleLogin";
}

// IAM's account and group changes: their OCSF class and activity, or
// {0, 0} for any other call.
std::pair<int, int> IdentityChange(std::string_view source, std::string_view name) {
  if (source != "iam.amazonaws.com") return {0, 0};
  struct Map {
    std::string_view name;
    int class_uid, activity;
  };
  static constexpr Map kMap[] = {
      {"CreateUser", ocsf::kAccountChange, ocsf::kAccountCreate},
      {"DeleteUser", ocsf::kAccountChange, ocsf::kAccountDelete},
      {"AttachUserPolicy", ocsf::kAccountChange, ocsf::kAccountAttachPolicy},
      {"PutUserPolicy", ocsf::kAccountChange, ocsf::kAccountAttachPolicy},
      {"DetachUserPolicy", ocsf::kAccountChange, ocsf::kAccountDetachPolicy},
      {"DeleteUserPolicy", ocsf::kAccountChange, ocsf::kAccountDetachPolicy},
      {"AttachRolePolicy", ocsf::kAccountChange, ocsf::kAccountAttachPolicy},
      {"PutRolePolicy", ocsf::kAccountChange, ocsf::kAccountAttachPolicy},
      {"DetachRolePolicy", ocsf::kAccountChange, ocsf::kAccountDetachPolicy},
      {"DeleteRolePolicy", ocsf::kAccountChange, ocsf::kAccountDetachPolicy},
      {"CreateLoginProfile", ocsf::kAccountChange, ocsf::kAccountPasswordChange},
      {"UpdateLoginProfile", ocsf::kAccountChange, ocsf::kAccountPasswordChange},
      {"ChangePassword", ocsf::kAccountChange, ocsf::kAccountPasswordChange},
      {"EnableMFADevice", ocsf::kAccountChange, ocsf::kAccountMfaEnable},
      {"DeactivateMFADevice", ocsf::kAccountChange, ocsf::kAccountMfaDisable},
      {"AddUserToGroup", ocsf::kGroupManagement, ocsf::kGroupAddUser},
      {"RemoveUserFromGroup", ocsf::kGroupManagement, ocsf::kGroupRemoveUser},
      {"CreateGroup", ocsf::kGroupManagement, ocsf::kGroupCreate},
      {"DeleteGroup", ocsf::kGroupManagement, ocsf::kGroupDelete},
      {"AttachGroupPolicy", ocsf::kGroupManagement, ocsf::kGroupAssignPrivileges},
      {"PutGroupPolicy", ocsf::kGroupManagement, ocsf::kGroupAssignPrivileges},
      {"DetachGroupPolicy", ocsf::kGroupManagement, ocsf::kGroupRevokePrivileges},
      {"DeleteGroupPolicy", ocsf::kGroupManagement, ocsf::kGroupRevokePrivileges},
  };
  for (const Map& m : kMap) {
    if (m.name == name) return {m.class_uid, m.activity};
  }
  return {0, 0};
}

}  // namespace

// One CloudTrail record.
Status CloudTrail(dom::element r, std::string_view raw, const ImportOptions& o, Sink& sink) {
  std::string& out = sink.out;
  if (!Field(r, "digestStartTime").empty() || !Field(r, "digestS3Bucket").empty()) {
    return InvalidArgument("this is a CloudTrail digest file (integrity hashes of log files), not a log of events: "
                           "import the log files it covers");
  }
  std::string_view name = Field(r, "eventName");
  std::string_view when = Field(r, "eventTime");
  if (name.empty()) return InvalidArgument("a CloudTrail record needs eventName");
  int64_t time_ms = MillisOf(when);
  if (time_ms <= 0) return InvalidArgument("eventTime is missing or not an RFC 3339 time");
  // Older event versions have no eventID: the record's own digest keys it.
  std::string_view event_id = Field(r, "eventID");
  std::string fallback_id;
  if (event_id.empty()) {
    fallback_id = "sha256:" + Sha256Hex(raw);
    event_id = fallback_id;
  }
  bool read_only = false;
  if (r["readOnly"].get(read_only)) read_only = false;
  std::string_view error = Field(r, "errorCode");
  int status_id = Outcome(r, error);
  bool sign_in = IsSignIn(Field(r, "eventType"), name);
  int class_uid = sign_in ? ocsf::kAuthentication : ocsf::kApiActivity;
  int activity = sign_in ? 1 : read_only ? 2 : ActivityOfWord(name);
  auto [identity_class, identity_activity] = IdentityChange(Field(r, "eventSource"), name);
  if (!sign_in && identity_class != 0) {
    class_uid = identity_class;
    activity = identity_activity;
  }
  // The account or group acted on, from the call's parameters.
  bool has_params = false;
  dom::element params = Child(r, "requestParameters", has_params);
  std::string_view target_user = has_params ? Field(params, "userName") : std::string_view();
  std::string_view target_role = has_params ? Field(params, "roleName") : std::string_view();
  std::string_view target_group = has_params ? Field(params, "groupName") : std::string_view();
  std::string_view policy = has_params ? Field(params, "policyArn") : std::string_view();
  if (policy.empty() && has_params) policy = Field(params, "policyName");

  Writer w(out);
  w.Open();
  Common(w, class_uid, activity, time_ms, status_id,
         status_id == ocsf::kStatusFailure && sign_in ? ocsf::kSeverityLow : ocsf::kSeverityInformational);
  w.StrIf("status_code", error).StrIf("status_detail", Field(r, "errorMessage"));
  Metadata(w, "CloudTrail", "AWS", event_id, when);
  w.Open("cloud").Str("provider", o.provider).StrIf("region", Field(r, "awsRegion"));
  std::string_view account = Field(r, "recipientAccountId");
  if (!account.empty()) w.Open("account").Str("uid", account).Close();
  w.Close();
  bool found = false;
  dom::element who = Child(r, "userIdentity", found);
  std::string_view user_name, arn;
  if (found) {
    user_name = Field(who, "userName");
    if (user_name.empty()) {
      dom::element issuer;
      if (!who["sessionContext"]["sessionIssuer"].get(issuer)) user_name = Field(issuer, "userName");
    }
    arn = Field(who, "arn");
  }
  auto write_user = [&](std::string_view key) {
    w.Open(key);
    w.StrIf("name", user_name.empty() ? arn : user_name)
        .StrIf("uid", arn.empty() ? Field(who, "principalId") : arn)
        .StrIf("type", Field(who, "type"));
    std::string_view owner = Field(who, "accountId");
    if (!owner.empty()) w.Open("account").Str("uid", owner).Close();
    w.Close();
  };
  w.Open("actor");
  if (found) {
    write_user("user");
  } else {
    UnknownUser(w);
  }
  // The AWS service that made the call on the principal's behalf.
  if (found) w.StrIf("invoked_by", Field(who, "invokedBy"));
  w.Close();
  if (class_uid == ocsf::kAccountChange) {
    // The account changed: a user, or a role (a policy attached to it).
    if (!target_user.empty()) {
      w.Open("user").Str("name", target_user).Str("type", "User").Close();
    } else if (!target_role.empty()) {
      w.Open("user").Str("name", target_role).Str("type", "Role").Close();
    } else if (found) {
      write_user("user");  // ChangePassword: the caller's own
    } else {
      UnknownUser(w);
    }
    if (!policy.empty()) w.OpenArray("policies").Open().Str("name", policy).Close().CloseArray();
  } else if (class_uid == ocsf::kGroupManagement) {
    w.Open("group").Str("name", target_group.empty() ? std::string_view("unknown") : target_group).Close();
    if (!target_user.empty()) w.Open("user").Str("name", target_user).Str("type", "User").Close();
    if (!policy.empty()) w.OpenArray("privileges").Str("", policy).CloseArray();
  }
  if (sign_in) {
    if (found) {
      write_user("user");
    } else {
      UnknownUser(w);
    }
    w.Open("service").Str("name", Field(r, "eventSource")).Close();
    bool has_extra = false;
    dom::element extra = Child(r, "additionalEventData", has_extra);
    if (has_extra && !Field(extra, "MFAUsed").empty()) w.Bool("is_mfa", Field(extra, "MFAUsed") == "Yes");
  }
  SourceEndpoint(w, Field(r, "sourceIPAddress"));
  w.Open("http_request").StrIf("user_agent", Field(r, "userAgent")).Close();
  w.Open("api").Str("operation", name).Open("service").Str("name", Field(r, "eventSource")).Close();
  w.Open("request").StrIf("uid", Field(r, "requestID")).Close().Close();
  dom::array resources;
  if (!r["resources"].get(resources) && resources.size() > 0) {
    w.OpenArray("resources");
    for (dom::element res : resources) {
      w.Open().StrIf("uid", Field(res, "ARN")).StrIf("type", Field(res, "type")).Close();
    }
    w.CloseArray();
  }
  w.Str("raw_data", raw);
  w.Close();
  sink.Emit(event_id);
  return Status::Ok();
}

}  // namespace causeway::audit::detail
