# The comparable mapping for jq: the same OCSF fields causeway audit import
# writes for a CloudTrail record.
def activity: if .readOnly or (.eventName | test("^(Get|List|Describe|Lookup|Head)")) then 2
  elif (.eventName | test("^(Create|Run|Put|Start|Add|Attach|Register|Import)")) then 1
  elif (.eventName | test("^(Delete|Terminate|Remove|Detach|Deregister|Revoke)")) then 4 else 3 end;
activity as $a
| {class_uid: 6003, category_uid: 6, activity_id: $a, type_uid: (600300 + $a), severity_id: 1,
   status_id: (if .errorCode then 2 else 1 end),
   time: ((.eventTime | fromdateiso8601) * 1000),
   metadata: {product: {name: "CloudTrail", vendor_name: "AWS"}, version: "1.3.0", uid: .eventID, original_time: .eventTime},
   cloud: {provider: "aws", region: .awsRegion, account: {uid: .recipientAccountId}},
   actor: {user: {name: (.userIdentity.userName // .userIdentity.sessionContext.sessionIssuer.userName // .userIdentity.arn),
                  uid: (.userIdentity.arn // .userIdentity.principalId), type: .userIdentity.type}},
   src_endpoint: (if (.sourceIPAddress | test("^[0-9a-fA-F.:]+$")) then {ip: .sourceIPAddress} else {domain: .sourceIPAddress} end),
   http_request: {user_agent: .userAgent},
   api: {operation: .eventName, service: {name: .eventSource}, request: {uid: .requestID}},
   resources: [.resources[]? | {uid: .ARN, type: .type}],
   raw_data: tojson}
