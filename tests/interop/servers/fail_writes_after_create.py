"""A stdio pass-through in front of an MCP server (the real `argus-plugin-server`): the moment
the server answers a project creation, it creates the file named by its first argument before
passing the answer on. Tests point `ARGUS_SUPERVISOR_TEST_FAIL_WRITES_FLAG` at that file, so the
supervisor learns of the new project while its disk refuses to keep the binding — and is then
killed: a crash between the creation and the binding being persisted, made exact.

Usage: fail_writes_after_create.py FLAG SERVER [ARGS...]"""

import subprocess
import sys
import threading
from pathlib import Path

flag = Path(sys.argv[1])
server = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def pump_in():
    for line in sys.stdin.buffer:
        server.stdin.write(line)
        server.stdin.flush()
    server.stdin.close()


threading.Thread(target=pump_in, daemon=True).start()
for line in server.stdout:
    # The creation's answer is the only one that carries a new project's `sid`.
    if b'\\"sid\\"' in line:
        flag.touch()
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
sys.exit(server.wait())
