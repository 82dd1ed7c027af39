"""Runs a test suite and appends one line per test to a results file: SUITE TESTID pass|fail|error|skip.

    runner.py unittest SUITE FOLDER RESULTS   unittest discovery in FOLDER (SecretStorage's tests)
    runner.py pytest FILE RESULTS             pytest on FILE; each test class has a `suite` attribute

A line is written as soon as its test ends, so a run cut short keeps what it did. The same lines,
with why a test did not pass and the tracebacks, go to standard error; pytest's own report goes to
standard output. Each test has TEST_SECONDS to finish.
"""

import signal
import sys
import unittest

TEST_SECONDS = 60


def on_alarm(number, frame):
    raise TimeoutError(f"the test took longer than {TEST_SECONDS} seconds")


class Results:
    """The results file, one line a test."""

    def __init__(self, path):
        self.file = open(path, "a", encoding="utf-8")

    def add(self, suite, test, outcome, detail="", reason=""):
        """Writes the line of a test; `detail` is its traceback, `reason` a line that says why."""
        test = "_".join(test.split()) or "unnamed"
        self.file.write(f"{suite} {test} {outcome}\n")
        self.file.flush()
        reason = reason or (detail.strip().splitlines() or [""])[-1]
        print(f"{suite} {test} {outcome}" + (f": {reason}" if reason else ""), file=sys.stderr, flush=True)
        if detail and outcome in ("fail", "error"):
            print("    " + detail.rstrip().replace("\n", "\n    "), file=sys.stderr, flush=True)


class UnittestResult(unittest.TestResult):
    """Keeps the outcome of each test: its first failure or error, else skip or pass."""

    def __init__(self, suite, results):
        super().__init__()
        self.suite, self.results, self.outcome = suite, results, None

    def startTest(self, test):
        super().startTest(test)
        self.outcome = ("pass", "")
        signal.alarm(TEST_SECONDS)

    def stopTest(self, test):
        signal.alarm(0)
        super().stopTest(test)
        self.results.add(self.suite, test.id(), *self.outcome)

    def addError(self, test, error):
        super().addError(test, error)
        self.outcome = ("error", self._exc_info_to_string(error, test))

    def addFailure(self, test, error):
        super().addFailure(test, error)
        self.outcome = ("fail", self._exc_info_to_string(error, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.outcome = ("skip", "", reason)


def run_unittest(suite, folder, results):
    tests = unittest.TestLoader().discover(folder)
    result = UnittestResult(suite, results)
    # A module that does not import is a test of its own that fails (unittest.loader._FailedTest).
    tests.run(result)
    return 0


class PytestCollector:
    """A pytest plugin: the outcome of each test from its setup, call and teardown reports."""

    def __init__(self, results):
        self.results, self.suites, self.outcomes = results, {}, {}

    def pytest_collection_modifyitems(self, items):
        for item in items:
            self.suites[item.nodeid] = getattr(item.cls, "suite", item.module.__name__)

    def pytest_runtest_setup(self, item):
        signal.alarm(TEST_SECONDS)

    def pytest_runtest_teardown(self, item):
        signal.alarm(0)

    def pytest_runtest_logreport(self, report):
        outcome = self.outcomes.setdefault(report.nodeid, ["pass", "", ""])
        if outcome[0] == "pass":
            if report.failed:
                crash = getattr(report.longrepr, "reprcrash", None)
                outcome[:] = [
                    "fail" if report.when == "call" else "error",
                    report.longreprtext,
                    crash.message.splitlines()[0] if crash else "",
                ]
            elif report.skipped:
                reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else ""
                outcome[:] = ["skip", "", reason]
        if report.when == "teardown":
            suite = self.suites.get(report.nodeid, "pytest")
            name = report.nodeid.split("::")[-1]
            self.results.add(suite, name, *self.outcomes.pop(report.nodeid))

    def pytest_collectreport(self, report):
        if report.failed:
            self.results.add("pytest", report.nodeid or "collection", "error", report.longreprtext)


def run_pytest(path, results):
    import pytest

    arguments = [path, "-q", "-p", "no:cacheprovider"]
    status = pytest.main(arguments, plugins=[PytestCollector(results)])
    # 0: all passed, 1: some failed. Anything else is pytest itself failing.
    return 0 if status in (0, 1) else 2


def main(arguments):
    signal.signal(signal.SIGALRM, on_alarm)
    if len(arguments) == 4 and arguments[0] == "unittest":
        return run_unittest(arguments[1], arguments[2], Results(arguments[3]))
    if len(arguments) == 3 and arguments[0] == "pytest":
        return run_pytest(arguments[1], Results(arguments[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
