"""The test run's record for `qualify --test-results`, from what the runners printed.

usage: test_record.py EXIT_CODE CARGO_LOG PYTEST_LOG COMMIT  (the record, as JSON, on stdout)

cargo test: each `Running unittests ...` binary and each `Doc-tests` run counts as unit, each
`Running tests/...` binary as integration; its `test result:` line gives the counts. pytest: its
closing summary line (`N passed, M skipped ...`).
"""
import datetime
import json
import re
import sys


def counts():
    return {"passed": 0, "failed": 0, "ignored": 0}


def cargo(path, unit, integration):
    kind = unit
    with open(path, errors="replace") as f:
        for line in f:
            s = line.strip()
            if s.startswith("Running unittests") or s.startswith("Doc-tests"):
                kind = unit
            elif s.startswith("Running "):
                kind = integration
            m = re.match(r"test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored", s)
            if m:
                kind["passed"] += int(m.group(1))
                kind["failed"] += int(m.group(2))
                kind["ignored"] += int(m.group(3))


def pytest(path, into):
    with open(path, errors="replace") as f:
        lines = [l for l in f if re.search(r"\d+ (passed|failed|error)", l)]
    if not lines:
        return
    last = lines[-1]
    for word, key in (("passed", "passed"), ("failed", "failed"), ("error", "failed"),
                      ("skipped", "ignored")):
        for m in re.finditer(r"(\d+) %ss?\b" % word, last):
            into[key] += int(m.group(1))


def main():
    code, cargo_log, pytest_log, commit = sys.argv[1:5]
    unit, integration, openoperator = counts(), counts(), counts()
    cargo(cargo_log, unit, integration)
    pytest(pytest_log, openoperator)
    print(json.dumps({
        "commit": commit,
        "finished_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "unit": unit,
        "integration": integration,
        "openoperator": openoperator,
        "exit_code": int(code),
    }, indent=2))


if __name__ == "__main__":
    main()
