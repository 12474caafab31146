#!/usr/bin/python3
"""Mutation testing of wtrack (make mutate; doc/mutation.md).

Each mutant in tests/mutants/*.mut names a file, a snippet of it that
occurs exactly once, the snippet's replacement and the test files that must
fail once the replacement is in. This script copies the built tree to a
scratch directory, runs the named tests there once unmutated (a test that
already fails would "kill" anything), then for each mutant: puts it in,
builds, runs its tests under prove, restores the file; and prints a table
and the score. Mutants marked equivalent are listed, not run or counted.

  tests/mutate.py                  every mutant
  tests/mutate.py --only A,B       the named mutants
  tests/mutate.py --check          only that every snippet occurs exactly
                                   once in its file (no build, no test)
  tests/mutate.py --list           the mutants, one a line
  tests/mutate.py --mutants DIR    the *.mut files of DIR, not tests/mutants

Exit status: 0 when every non-equivalent mutant run was killed, 1 when one
survived (or did not build), 2 for a bad list (a snippet not found exactly
once, a missing file or test) or a failing unmutated test.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MUTANT_DIR = os.path.join(TOP, "tests", "mutants")
# Build outputs and the scratch copy need nothing from these.
SKIP_TOP = {".git", "run"}
TEST_TIMEOUT = 900


class ListError(Exception):
    pass


class Mutant:
    def __init__(self, name, where):
        self.name = name
        self.where = where          # "tests/mutants/x.mut:12"
        self.file = None
        self.tests = []
        self.equivalent = None      # the reason, for an equivalent mutant
        self.why = None
        self.original = None
        self.replacement = None


def parse_block(lines, i, where):
    """The verbatim lines from lines[i] up to a line '===' or '>>>'."""
    out = []
    while i < len(lines) and lines[i] not in ("===", ">>>"):
        out.append(lines[i])
        i += 1
    if i == len(lines):
        raise ListError("%s: snippet not closed by === or >>>" % where)
    return "\n".join(out), i


def parse_file(path):
    rel = os.path.relpath(path, TOP) if path.startswith(TOP + os.sep) else path
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    mutants = []
    m = None
    i = 0
    while i < len(lines):
        line = lines[i]
        where = "%s:%d" % (rel, i + 1)
        if line.startswith("== "):
            m = Mutant(line[3:].strip(), where)
            mutants.append(m)
        elif line == "" or line.startswith("#"):
            pass
        elif m is None:
            raise ListError("%s: expected '== NAME' first" % where)
        elif line.startswith("file: "):
            m.file = line[6:].strip()
        elif line.startswith("tests: "):
            m.tests = line[7:].split()
        elif line.startswith("why: "):
            m.why = line[5:].strip()
        elif line.startswith("equivalent: "):
            m.equivalent = line[12:].strip()
        elif line == "<<<":
            m.original, i = parse_block(lines, i + 1, where)
            if lines[i] != "===":
                raise ListError("%s: snippet without === and a replacement" % where)
            m.replacement, i = parse_block(lines, i + 1, where)
            if lines[i] != ">>>":
                raise ListError("%s: replacement not closed by >>>" % where)
        else:
            raise ListError("%s: cannot read this line: %r" % (where, line))
        i += 1
    return mutants


def load_mutants(directory=MUTANT_DIR):
    mutants = []
    for name in sorted(os.listdir(directory)):
        if name.endswith(".mut"):
            mutants += parse_file(os.path.join(directory, name))
    return mutants


def validate(mutants):
    """Every problem with the list, as messages naming the mutant."""
    problems = []
    seen = set()
    for m in mutants:
        tag = "%s (%s)" % (m.name, m.where)
        if m.name in seen:
            problems.append("%s: a second mutant of this name" % tag)
        seen.add(m.name)
        if not m.file or m.original is None:
            problems.append("%s: needs file: and a <<< snippet === replacement >>>" % tag)
            continue
        if m.original == m.replacement:
            problems.append("%s: the replacement equals the snippet" % tag)
        if not m.equivalent and not m.tests:
            problems.append("%s: names no test that kills it" % tag)
        if not m.equivalent and not m.why:
            problems.append("%s: needs why: (what a user would get)" % tag)
        for t in m.tests:
            if not os.path.exists(os.path.join(TOP, t)) and not os.path.exists(os.path.join(TOP, t + ".c")):
                problems.append("%s: no test %s" % (tag, t))
        path = os.path.join(TOP, m.file)
        if not os.path.isfile(path):
            problems.append("%s: no file %s" % (tag, m.file))
            continue
        with open(path, encoding="utf-8") as f:
            n = f.read().count(m.original)
        if n != 1:
            problems.append("%s: its snippet occurs %d times in %s, not exactly once "
                            "(the code changed: update the mutant)" % (tag, n, m.file))
    return problems


def copy_tree(dest):
    for name in os.listdir(TOP):
        if name in SKIP_TOP:
            continue
        src = os.path.join(TOP, name)
        if os.path.isdir(src) and not os.path.islink(src):
            shutil.copytree(src, os.path.join(dest, name), symlinks=True)
        else:
            shutil.copy2(src, os.path.join(dest, name), follow_symlinks=False)


def build(tree, log):
    # Without -Werror: a mutant often leaves a variable unused, which is
    # no reason to call it killed.
    r = subprocess.run(["make", "-j2", "-s", "WERROR=no", "mutate-targets"], cwd=tree,
                       stdout=log, stderr=subprocess.STDOUT)
    return r.returncode == 0


def test_env():
    env = dict(os.environ)
    # The tests must use the scratch tree's builds, whatever the caller set.
    for v in ("WTRACK", "PLUGIN", "KEEP_TEST_DIRS"):
        env.pop(v, None)
    return env


def run_tests(tree, tests, log):
    """True when every test passed."""
    try:
        r = subprocess.run(["prove", "-f"] + tests, cwd=tree, env=test_env(),
                           stdout=log, stderr=subprocess.STDOUT, timeout=TEST_TIMEOUT)
    except subprocess.TimeoutExpired:
        log.write(b"\n# mutate.py: timed out\n")
        return False
    return r.returncode == 0


def run_mutant(tree, m, log):
    """killed, survived or no-build."""
    path = os.path.join(tree, m.file)
    with open(path, encoding="utf-8") as f:
        original = f.read()
    mode = os.stat(path).st_mode
    log.write(("\n==== %s: %s\n" % (m.name, m.file)).encode())
    log.flush()
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(original.replace(m.original, m.replacement, 1))
        os.chmod(path, mode)
        if not build(tree, log):
            return "no-build"
        return "survived" if run_tests(tree, m.tests, log) else "killed"
    finally:
        # A newer mtime than the mutated build's outputs: the next build
        # compiles the original again.
        with open(path, "w", encoding="utf-8") as f:
            f.write(original)
        os.chmod(path, mode)


def main():
    ap = argparse.ArgumentParser(description="wtrack's mutation tests")
    ap.add_argument("--only", help="comma-separated mutant names")
    ap.add_argument("--check", action="store_true",
                    help="only check the list (every snippet exactly once)")
    ap.add_argument("--list", action="store_true", help="list the mutants")
    ap.add_argument("--keep", action="store_true", help="keep the scratch tree")
    ap.add_argument("--log", help="the builds' and tests' output (default: in the scratch tree)")
    ap.add_argument("--mutants", default=MUTANT_DIR,
                    help="the directory of *.mut files (default: tests/mutants)")
    args = ap.parse_args()

    try:
        mutants = load_mutants(args.mutants)
    except (ListError, OSError) as e:
        print("mutate: %s" % e, file=sys.stderr)
        return 2
    problems = validate(mutants)
    for p in problems:
        print("mutate: %s" % p, file=sys.stderr)
    if problems:
        return 2
    if args.list:
        for m in mutants:
            print("%-36s %-34s %s" % (m.name, m.file,
                                      "equivalent" if m.equivalent else " ".join(m.tests)))
        return 0
    if args.check:
        print("mutate: %d mutants (%d equivalent), every snippet found exactly once"
              % (len(mutants), sum(1 for m in mutants if m.equivalent)))
        return 0
    if args.only:
        names = args.only.split(",")
        by_name = {m.name: m for m in mutants}
        unknown = [n for n in names if n not in by_name]
        if unknown:
            print("mutate: no mutant named %s" % ", ".join(unknown), file=sys.stderr)
            return 2
        mutants = [by_name[n] for n in names]

    started = time.time()
    tree = tempfile.mkdtemp(prefix="wtrack-mutate.")
    log_path = args.log or os.path.join(tree, "mutate.log")
    rc = 2
    try:
        rc = run_all(tree, mutants, log_path, started)
    finally:
        # A failure keeps the tree and its log for a look.
        if args.keep or rc != 0:
            print("mutate: scratch tree kept in %s" % tree, file=sys.stderr)
        else:
            shutil.rmtree(tree, ignore_errors=True)
    return rc


def run_all(tree, mutants, log_path, started):
    copy_tree(tree)
    runnable = [m for m in mutants if not m.equivalent]
    with open(log_path, "ab") as log:
        if not build(tree, log):
            print("mutate: the unmutated tree does not build (see %s)" % log_path, file=sys.stderr)
            return 2
        tests = sorted({t for m in runnable for t in m.tests})
        if tests and not run_tests(tree, tests, log):
            print("mutate: a test fails without any mutant (see %s)" % log_path, file=sys.stderr)
            return 2
        print("%-36s %-32s %-9s %5s" % ("mutant", "file", "result", "secs"))
        results = {}
        for m in mutants:
            t0 = time.time()
            if m.equivalent:
                res = "equivalent"
            else:
                res = run_mutant(tree, m, log)
            results[m.name] = res
            print("%-36s %-32s %-9s %5.0f" % (m.name, m.file, res, time.time() - t0), flush=True)
            if m.equivalent:
                print("    equivalent: %s" % m.equivalent)
        # The tree is back as it was: it must still build.
        if not build(tree, log):
            print("mutate: the restored tree does not build (see %s)" % log_path, file=sys.stderr)
            return 2
    killed = sum(1 for r in results.values() if r == "killed")
    counted = sum(1 for r in results.values() if r != "equivalent")
    bad = [n for n, r in results.items() if r in ("survived", "no-build")]
    print("score: %d of %d non-equivalent mutants killed (%.0f%%), %d equivalent, %.1f minutes"
          % (killed, counted, 100.0 * killed / counted if counted else 100.0,
             len(results) - counted, (time.time() - started) / 60))
    if bad:
        print("not killed: %s (log: %s)" % (", ".join(bad), log_path))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
