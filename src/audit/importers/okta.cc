#include "audit/importers/importer.h"

namespace causeway::audit::detail {

// One Okta System Log event (the /api/v1/logs array or JSON lines). Sign-ins
// are Authentication, user lifecycle, passwords and factors Account Change,
// group membership and lifecycle Group Management, the rest API Activity.
Status Okta(dom::element r, std::string_view raw, const ImportOptions& o, Sink& sink) {
  std::string_view uuid = Field(r, "uuid");
  std::string_view type = Field(r, "eventType");
  std::string_view when = Field(r, "published");
  if (uuid.empty() || type.empty()) return InvalidArgument("an Okta System Log event needs uuid and eventType");
  int64_t time_ms = MillisOf(when);
  if (time_ms <= 0) return InvalidArgument("published is missing or not an RFC 3339 time");
  bool found = false;
  dom::element outcome = Child(r, "outcome", found);
  std::string_view result = found ? Field(outcome, "result") : std::string_view();
  std::string_view reason = found ? Field(outcome, "reason") : std::string_view();
  int status_id = result == "SUCCESS" || result == "ALLOW" ? ocsf::kStatusSuccess
                  : result == "FAILURE" || result == "DENY" ? ocsf::kStatusFailure
                                                           : ocsf::kStatusUnknown;
  auto starts = [&](std::string_view prefix) { return type.substr(0, prefix.size()) == prefix; };
  int class_uid = ocsf::kApiActivity;
  int activity = 0;
  if (starts("user.session.") || starts("user.authentication.") || starts("policy.evaluate_sign_on")) {
    // One sign-in is one Logon (user.session.start); the steps around it
    // (policy evaluation, factors, SSO into an app) are Other, so logons
    // are not counted twice.
    class_uid = ocsf::kAuthentication;
    activity = type == "user.session.start" ? 1 : type == "user.session.end" ? 2 : 99;
  } else if (starts("user.lifecycle.") || starts("user.account.") || starts("user.mfa.factor.")) {
    class_uid = ocsf::kAccountChange;
    std::string_view verb = type.substr(type.rfind('.') + 1);
    activity = verb == "create"                                                     ? ocsf::kAccountCreate
               : (starts("user.lifecycle.delete") || verb == "delete")              ? ocsf::kAccountDelete
               : (verb == "activate" || verb == "reactivate" || verb == "unsuspend") ? ocsf::kAccountEnable
               : (verb == "deactivate" || verb == "suspend")                        ? ocsf::kAccountDisable
               : verb == "update_password"                                          ? ocsf::kAccountPasswordChange
               : (verb == "reset_password" || verb == "expire_password")            ? ocsf::kAccountPasswordReset
               : verb == "lock"                                                     ? ocsf::kAccountLock
               : starts("user.mfa.factor.") && verb == "activate"                   ? ocsf::kAccountMfaEnable
               : starts("user.mfa.factor.") && (verb == "deactivate" || verb == "reset_all")
                   ? ocsf::kAccountMfaDisable
                   : ocsf::kOther;
  } else if (starts("group.user_membership.") || starts("group.lifecycle.") || starts("group.privilege.")) {
    class_uid = ocsf::kGroupManagement;
    activity = type == "group.user_membership.add"       ? ocsf::kGroupAddUser
               : type == "group.user_membership.remove"  ? ocsf::kGroupRemoveUser
               : type == "group.lifecycle.create"        ? ocsf::kGroupCreate
               : type == "group.lifecycle.delete"        ? ocsf::kGroupDelete
               : type == "group.privilege.grant"         ? ocsf::kGroupAssignPrivileges
               : type == "group.privilege.revoke"        ? ocsf::kGroupRevokePrivileges
                                                         : ocsf::kOther;
  } else {
    activity = ActivityOfWord(type.substr(type.rfind('.') + 1));
  }

  Writer w(sink.out);
  w.Open();
  Common(w, class_uid, activity, time_ms, status_id, SeverityOfLevel(Field(r, "severity")));
  w.StrIf("message", Field(r, "displayMessage")).StrIf("status_detail", reason);
  Metadata(w, "System Log", "Okta", uuid, when);
  w.Open("cloud").Str("provider", o.provider).Close();
  dom::element actor = Child(r, "actor", found);
  std::string_view actor_name = found ? Field(actor, "alternateId") : std::string_view();
  w.Open("actor");
  if (found) {
    w.Open("user").StrIf("name", actor_name).StrIf("uid", Field(actor, "id")).StrIf("full_name", Field(actor, "displayName"));
    w.Close();
  } else {
    UnknownUser(w);
  }
  w.Close();
  dom::element client = Child(r, "client", found);
  std::string_view ip = found ? Field(client, "ipAddress") : std::string_view();
  SourceEndpoint(w, ip);
  // The first target that is a user is the account acted on; sign-ins are
  // the actor's own.
  dom::array targets;
  bool has_targets = !r["target"].get(targets);
  std::string_view target_user, target_id, group_name, group_id;
  if (has_targets) {
    for (dom::element t : targets) {
      if (Field(t, "type") == "User" && target_user.empty() && target_id.empty()) {
        target_user = Field(t, "alternateId");
        target_id = Field(t, "id");
      } else if ((Field(t, "type") == "UserGroup" || Field(t, "type") == "Group") && group_name.empty() && group_id.empty()) {
        group_name = Field(t, "displayName");
        if (group_name.empty()) group_name = Field(t, "alternateId");
        group_id = Field(t, "id");
      }
    }
  }
  if (class_uid == ocsf::kAuthentication) {
    if (actor_name.empty()) {
      UnknownUser(w);
    } else {
      w.Open("user").Str("name", actor_name).Close();
    }
    w.Open("service").Str("name", "okta").Close();
    w.Open("dst_endpoint").Str("svc_name", "okta").Close();
  } else if (class_uid == ocsf::kAccountChange) {
    std::string_view who = target_user.empty() ? actor_name : target_user;
    if (who.empty() && target_id.empty()) {
      UnknownUser(w);
    } else {
      w.Open("user").StrIf("name", who).StrIf("uid", target_id).Close();
    }
  } else if (class_uid == ocsf::kGroupManagement) {
    // The group, and the member added or removed: both searchable.
    w.Open("group");
    if (group_name.empty() && group_id.empty()) {
      w.Str("name", "unknown");
    } else {
      w.StrIf("name", group_name).StrIf("uid", group_id);
    }
    w.Close();
    if (!target_user.empty() || !target_id.empty()) w.Open("user").StrIf("name", target_user).StrIf("uid", target_id).Close();
  }
  w.Open("api").Str("operation", type).Open("service").Str("name", "okta").Close();
  dom::element transaction = Child(r, "transaction", found);
  if (found) w.Open("request").StrIf("uid", Field(transaction, "id")).Close();
  w.Close();
  if (has_targets && targets.size() > 0) {
    w.OpenArray("resources");
    for (dom::element t : targets) {
      w.Open().StrIf("uid", Field(t, "id")).StrIf("name", Field(t, "alternateId")).StrIf("type", Field(t, "type")).Close();
    }
    w.CloseArray();
  }
  w.Str("raw_data", raw);
  w.Close();
  sink.Emit(uuid);
  return Status::Ok();
}

}  // namespace causeway::audit::detail
