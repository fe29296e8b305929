"""The checking half the Python parts of the script tests share.

    checks = Checks(cli)
    check, run = checks.check, checks.run
    ...
    checks.finish("numpy interop")
"""
import subprocess
import sys


class Checks:
    def __init__(self, cli=None, text=False):
        self.cli = cli
        self.count = 0
        self.failures = []
        self.text = text

    def check(self, cond, what):
        """Counts a check; a failed one is printed at once and fails the run."""
        self.count += 1
        if not cond:
            self.failures.append(what)
            print("FAIL:", what)
        return bool(cond)

    def run(self, *args, stdin=None):
        """The CLI with these arguments, its output captured."""
        return subprocess.run([self.cli, *args], capture_output=True, input=stdin,
                              text=self.text)

    def finish(self, label):
        print(f"{label}: {self.count - len(self.failures)} passed, {len(self.failures)} failed")
        # a run that checked nothing (no files found, a loop over nothing) proves nothing
        sys.exit(1 if self.failures or self.count == 0 else 0)
