"""One attempt of bench/secrets: checks that its brokered secret arrived,
then watches its federated token file for SECONDS, reading the token's
expiry every 100 ms: the least time it had left (negative: a refresh came
late and the job held an expired token) and how many distinct tokens it saw."""
import base64
import json
import os
import sys
import time

seconds = float(sys.argv[1])
path = os.environ["AWS_WEB_IDENTITY_TOKEN_FILE"]
secret_ok = os.environ.get("DB_PASSWORD") == sys.argv[2]
seen, least = set(), None
end = time.time() + seconds
while time.time() < end:
    try:
        token = open(path).read()
    except OSError:
        token = ""
    if token.count(".") == 2:
        part = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
        left = claims["exp"] - time.time()
        least = left if least is None else min(least, left)
        seen.add(claims["jti"])
    time.sleep(0.1)
print(json.dumps({"secret_ok": secret_ok, "tokens": len(seen), "least_left_s": least}))
