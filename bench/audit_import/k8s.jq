# The comparable mapping for jq: the same OCSF fields causeway audit import
# writes for a Kubernetes audit event.
def activity: {"create":1,"get":2,"list":2,"watch":2,"update":3,"patch":3,"delete":4,"deletecollection":4}[.verb] // 99;
def millis(t): (t | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) * 1000 + ((t | capture("\\.(?<f>[0-9]{3})") | .f | tonumber) // 0);
select(.stage != "RequestReceived" and .stage != "ResponseStarted")
| {class_uid: 6003, category_uid: 6, activity_id: activity, type_uid: (600300 + activity), severity_id: 1,
   status_id: (if (.responseStatus.code // 0) == 0 then 0 elif .responseStatus.code < 400 then 1 else 2 end),
   time: millis(.stageTimestamp),
   metadata: {product: {name: "Kubernetes", vendor_name: "Kubernetes"}, version: "1.3.0", uid: .auditID, original_time: .stageTimestamp},
   cloud: {provider: "coreweave"},
   actor: {user: {name: .user.username, uid: .user.uid, groups: [.user.groups[]? | {name: .}]}},
   src_endpoint: {ip: .sourceIPs[0]},
   http_request: {user_agent: .userAgent, url: {path: .requestURI}},
   api: {operation: .verb, service: {name: (.objectRef.apiGroup // "kubernetes")}, request: {uid: .auditID}},
   resources: [{type: .objectRef.resource, name: .objectRef.name, namespace: .objectRef.namespace}],
   raw_data: tojson}
