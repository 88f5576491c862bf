"""pool-request.py SOCKET CODE|JSON [N [PARALLEL]] — sends a request (a JSON object, or
CODE alone) to an nsrun pool and prints the answer document on one line; with N, sends
it N times, PARALLEL at once, and prints one answer per line (tests/integration/29-pool.t)."""
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python"))
from nsrun.pool import request  # noqa: E402

doc = json.loads(sys.argv[2]) if sys.argv[2].startswith("{") else {"code": sys.argv[2]}
n = int(sys.argv[3]) if len(sys.argv) > 3 else 1
par = int(sys.argv[4]) if len(sys.argv) > 4 else 1
with ThreadPoolExecutor(par) as ex:
    for answer in ex.map(lambda _: request(sys.argv[1], doc, 300), range(n)):
        print(json.dumps(answer), flush=True)
