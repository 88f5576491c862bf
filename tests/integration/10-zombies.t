#!/bin/bash
# B29: orphans are reaped by nsrun's init; the payload's own waitpid statuses are intact.
. "$(dirname "$0")/../lib.sh"
require_all

run_nsrun --image python --pids-limit 64 --timeout 30 - <<'PY'
import os, subprocess, time
for _ in range(300):
    subprocess.run(['sh', '-c', 'sleep 0.01 & exit 0'])
time.sleep(0.5)
z = sum(1 for p in os.listdir('/proc') if p.isdigit()
        and open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()[0] == 'Z')
print('zombies', z)
print('rc', subprocess.run(['sh', '-c', 'exit 3']).returncode)
PY
assert_eq "B29: exit 0" 0 "$RC"
assert_eq "B29: no zombies, subprocess status intact" "zombies 0
rc 3" "$OUT"
assert_not_match "B29: no EAGAIN" 'Resource temporarily unavailable' "$ERR"

done_testing
