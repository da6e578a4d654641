#!/usr/bin/env python3
"""Run a command and write the CPU time it used (getrusage of the waited-for
child: user + system seconds, the same measure for every tool) and its wall
time as JSON. SIGINT and SIGTERM are passed on to the command; the exit
status is the command's (128 + N when a signal ended it).

    python3 scripts/bench_rusage.py OUT.json -- CMD [ARG...]

Used by scripts/bench-throughput.sh for the pinned rows: `taskset` and
`ip netns exec` exec the tool in place, so the child's rusage is the tool's.
"""

import json
import os
import signal
import sys
import time


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    out, cmd = sys.argv[1], sys.argv[3:]
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda s, _f: os.kill(pid, s))
    while True:
        try:
            _, status, ru = os.wait4(pid, 0)
            break
        except InterruptedError:
            continue
    wall = time.monotonic() - t0
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"user_s": ru.ru_utime, "system_s": ru.ru_stime, "wall_s": wall,
                   "command": cmd}, f)
        f.write("\n")
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main())
