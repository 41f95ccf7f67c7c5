#!/usr/bin/env python3
"""Writes N Kubernetes audit events and N CloudTrail records as JSON lines
(k8s.jsonl, cloudtrail.jsonl in DIR): realistic shapes and sizes, varied
users, verbs, resources, addresses and outcomes, deterministic (seeded).

    generate.py DIR N
"""
import json
import random
import sys
import uuid
from datetime import datetime, timedelta, timezone

out, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(7)
start = datetime(2026, 11, 1, tzinfo=timezone.utc)
users = [f"user{i}@corp.example" for i in range(200)] + [f"system:serviceaccount:ml:runner-{i}" for i in range(20)]
verbs = ["get", "list", "watch", "create", "update", "patch", "delete"]
resources = ["pods", "jobs", "secrets", "configmaps", "persistentvolumeclaims", "nodes", "events"]
names = ["CreateBucket", "GetObject", "PutObject", "ListBuckets", "DeleteObject", "RunInstances",
         "TerminateInstances", "AssumeRoleWithWebIdentity", "DescribeInstances", "UpdateRole"]

def ts(i):
    return (start + timedelta(milliseconds=i * 37)).strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z"

with open(f"{out}/k8s.jsonl", "w") as f:
    for i in range(n):
        u = rng.choice(users)
        verb = rng.choice(verbs)
        res = rng.choice(resources)
        code = rng.choice([200, 200, 200, 201, 403, 404])
        ev = {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata",
              "auditID": str(uuid.UUID(int=rng.getrandbits(128))), "stage": "ResponseComplete",
              "requestURI": f"/api/v1/namespaces/ns{i % 40}/{res}/obj-{i % 997}", "verb": verb,
              "user": {"username": u, "uid": f"uid-{hash(u) & 0xffffff:x}",
                       "groups": ["system:authenticated", f"team-{i % 7}"]},
              "sourceIPs": [f"10.{i % 250}.{(i // 250) % 250}.{i % 7 + 1}"], "userAgent": "kubectl/v1.29.2 (linux/amd64)",
              "objectRef": {"resource": res, "namespace": f"ns{i % 40}", "name": f"obj-{i % 997}", "apiVersion": "v1"},
              "responseStatus": {"metadata": {}, "code": code},
              "requestReceivedTimestamp": ts(i), "stageTimestamp": ts(i + 1),
              "annotations": {"authorization.k8s.io/decision": "allow" if code < 400 else "forbid",
                              "authorization.k8s.io/reason": "RBAC: allowed by ClusterRoleBinding \"edit\""}}
        f.write(json.dumps(ev, separators=(",", ":")) + "\n")

with open(f"{out}/cloudtrail.jsonl", "w") as f:
    for i in range(n):
        name = rng.choice(names)
        user = rng.choice(users[:200]).split("@")[0]
        rec = {"eventVersion": "1.09",
               "userIdentity": {"type": "AssumedRole", "principalId": f"AROA{i % 500:08d}:{user}",
                                "arn": f"arn:aws:sts::111122223333:assumed-role/ml-{i % 9}/{user}",
                                "accountId": "111122223333",
                                "sessionContext": {"sessionIssuer": {"type": "Role", "userName": f"ml-{i % 9}",
                                                                     "arn": f"arn:aws:iam::111122223333:role/ml-{i % 9}"},
                                                   "attributes": {"mfaAuthenticated": "false"}}},
               "eventTime": ts(i)[:19] + "Z", "eventSource": "s3.amazonaws.com" if "Object" in name or "Bucket" in name else "ec2.amazonaws.com",
               "eventName": name, "awsRegion": rng.choice(["us-east-1", "us-west-2", "eu-west-1"]),
               "sourceIPAddress": f"203.0.{i % 250}.{i % 200 + 1}", "userAgent": "[aws-cli/2.15.10]",
               "requestParameters": {"bucketName": f"bucket-{i % 30}", "key": f"run/{i}/ckpt"},
               "responseElements": None, "requestID": f"{i:016X}", "eventID": str(uuid.UUID(int=rng.getrandbits(128))),
               "readOnly": name.startswith(("Get", "List", "Describe")),
               "resources": [{"type": "AWS::S3::Bucket", "ARN": f"arn:aws:s3:::bucket-{i % 30}"}],
               "eventType": "AwsApiCall", "managementEvent": True, "recipientAccountId": "111122223333"}
        if i % 13 == 0:
            rec["errorCode"] = "AccessDenied"
            rec["errorMessage"] = "not authorized"
        f.write(json.dumps(rec, separators=(",", ":")) + "\n")
