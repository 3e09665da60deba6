#!/usr/bin/env python3
"""The command-line fuzzer: simvm run with random argument lists.

Each case is an argument list drawn from the options `simvm --help` lists
(so a new option is fuzzed without touching this file), each with a value
of its kind, a well-formed one or a hostile one (a negative count, a size
past 2^64, an output path that is the script, /dev/full, a directory), a
script (an example, a test, an empty or binary file, a compiled .simc) and
sometimes a --replay file (a good one, a mutated one, /dev/zero). What
must hold for every case:

  - it ends within the time limit (values are kept small enough that a
    slow case is a defect, not a long simulation);
  - its exit status is one --help documents (0 1 2 3 4 5 130 143);
  - no sanitizer report and no "internal error" on stderr;
  - the script and the replay file are unchanged, and no temporary output
    file is left behind.

The cases come from --seed, so a failing case is reproduced by its number:

  python3 tests/fuzz/cli_fuzz.py SIMVM [--cases N] [--seed S] [--only K]

make test runs 200 cases on the build, make asan as many on the ASan
build; tests/fuzz/README.md says how to run it longer."""

import argparse
import hashlib
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DOCUMENTED_EXITS = {0, 1, 2, 3, 4, 5, 130, 143}
SANITIZER = re.compile(rb"AddressSanitizer|UndefinedBehaviorSanitizer|runtime error: .*(overflow|misaligned|null pointer)|LeakSanitizer|internal error")
SCRIPTS = ["examples/race.sim", "examples/lost_update.sim", "examples/retry.sim", "examples/election.sim",
           "tests/explore/choices.sim", "tests/explore/timers.sim", "tests/explore/uncaught.sim",
           "tests/explore/strict.sim", "tests/explore/spin.sim"]


def options_from_help(simvm):
    """[(name, kind)] for each option --help lists; kind is its value's
    placeholder (N, D, SIZE, F, LIST, ...) or None for a flag."""
    text = subprocess.run([simvm, "--help"], capture_output=True, text=True, check=True).stdout
    found = []
    for line in text.splitlines():
        m = re.match(r"^  (-[-\w=]+(?:, -[-\w=]+)*)(?: ([A-Z][A-Z/%]*))?(?:\s|$)", line)
        if not m:
            continue
        for name in m.group(1).split(", "):
            found.append((name, m.group(2)))
    return found


EXPLORE_ONLY = {"--json", "--shard", "--preemptions", "--no-shrink", "--jobs", "--schedule-out", "--depth"}
SINGLE_ONLY = {"--repeat", "--profile", "--profile-json", "--profile-folded", "--trace-json", "--timeline",
               "--stats-json", "--result", "--data-seed"}


def fits(name, mode):
    """Whether option `name` goes with a run of `mode`."""
    if name in ("--explore", "--seed", "--replay"):
        return False
    if name in EXPLORE_ONLY:
        return mode == "explore"
    if name in ("--strategy", "--jitter"):
        return mode in ("explore", "seed")
    if name in SINGLE_ONLY:
        return mode != "explore" and (name != "--data-seed" or mode == "plain")
    return True


class Case:
    def __init__(self, rng, work, options, simc_file, replay_good):
        self.rng, self.work = rng, work
        self.script = os.path.join(work, rng.choice(self.scripts(simc_file)))
        # a mode first, then mostly options that go with it, so that most
        # cases run something rather than end in a usage error
        mode = rng.choice(["plain", "plain", "explore", "explore", "seed", "replay"])
        fitting = [o for o in options if fits(o[0], mode)]
        self.args = {"plain": [], "explore": ["--explore", str(rng.randint(1, 12))],
                     "seed": ["--seed", str(rng.choice([0, 1, 7, 2**64 - 1]))], "replay": []}[mode]
        for _ in range(rng.randint(0, 4)):
            name, kind = rng.choice(fitting if rng.random() < 0.9 else options)
            if name in ("-h", "--help", "--version") and rng.random() < 0.8:
                continue
            self.args.append(name)
            if kind:
                self.args.append(self.value(kind, name))
        if mode == "replay" or rng.random() < 0.03:
            self.args += ["--replay", rng.choice([replay_good, replay_good, self.mutated(replay_good), "/dev/zero",
                                                  work, os.path.join(work, "missing.schedule")])]
        tail = [self.script]
        if rng.random() < 0.2:
            tail += rng.choice([["--trace"], ["--", "x"], ["a", "b"], ["--max-steps", "3"]])
        self.args = (["--max-steps", "200000"] if rng.random() < 0.7 else []) + self.args + tail

    @staticmethod
    def scripts(simc_file):
        return [os.path.basename(s) for s in SCRIPTS] + ["empty.sim", "binary.sim", "bad.sim",
                                                       os.path.basename(simc_file)]

    def value(self, kind, name):
        rng = self.rng
        if rng.random() < 0.06:
            return rng.choice(["", "-1", "0", "18446744073709551616", "99999999999999999999999", "1e3", "x",
                               "\x01\x1b[31m", "%s%n", "1/0", "0/0", "5/3", "nan", "10q"])
        if name in ("--explore", "--repeat", "--jobs", "--depth", "--preemptions"):
            return str(rng.choice([0, 1, 2, 3, 5, 8]))
        if name in ("--max-steps", "--max-work"):
            # bounded: a script of the pool may spin for ever (spin.sim)
            return str(rng.choice([0, 1, 2, 7, 100, 5000, 100000, 3000000]))
        if kind == "N":
            return str(rng.choice([0, 1, 2, 7, 100, 5000, 100000, 2**31, 2**63, 2**64 - 1]))
        if kind == "D":
            return rng.choice(["0ns", "1ms", "10ms", "1s", "500us", "3", "-5ms", "10h"])
        if kind == "SIZE":
            return rng.choice(["0B", "1KB", "64KB", "1MB", "512MB", "8GB", "17179869184GB", "10"])
        if kind == "F":
            return rng.choice([os.path.join(self.work, "out.file"), os.path.join(self.work, "sub", "out"),
                               self.script, "/dev/null", "/dev/full", self.work, os.path.join(self.work, "race.sim"),
                               os.path.join(self.work, "missing-dir", "x")])
        if kind == "LIST":
            return rng.choice(["uncaught", "limit", "uncaught,limit", "limit,limit", "", "all"])
        if kind in ("P%", "P"):
            return rng.choice(["10%", "2.5%", "0%", "100%", "99.99999%", "50"])
        if kind == "I/N":
            return rng.choice(["1/1", "1/2", "2/2", "1024/1024", "3/2", "0/1", "1/0"])
        if kind == "S":
            return rng.choice(["pct", "random", "dfs", "delay", "exhaustive", "PCT", "bogus"])
        return rng.choice(["1", "2", "pct", "x"])

    def mutated(self, good):
        path = os.path.join(self.work, "mutated.schedule")
        data = bytearray(open(good, "rb").read())
        for _ in range(self.rng.randint(1, 6)):
            at = self.rng.randrange(len(data))
            op = self.rng.randrange(3)
            if op == 0:
                data[at] = self.rng.randrange(256)
            elif op == 1:
                del data[at:at + self.rng.randint(1, 20)]
            else:
                data[at:at] = self.rng.choice([b"\n", b"99999999999999999999", b"step ", b"#", b"\0", b"-1"])
        open(path, "wb").write(bytes(data))
        return path


def prepare(work, simvm):
    for s in SCRIPTS:
        shutil.copy(os.path.join(ROOT, s), work)
    open(os.path.join(work, "empty.sim"), "w").close()
    open(os.path.join(work, "binary.sim"), "wb").write(bytes(range(256)) * 4)
    open(os.path.join(work, "bad.sim"), "w").write("main = { say(\"unclosed\"\n")
    os.mkdir(os.path.join(work, "sub"))
    simc = os.path.join(os.path.dirname(simvm), "simc")
    simc_file = os.path.join(work, "race.simc")
    subprocess.run([simc, "-o", simc_file, os.path.join(work, "race.sim")], check=True, capture_output=True)
    replay = os.path.join(work, "lost_update.schedule")
    subprocess.run([simvm, "--explore", "50", "-q", "--schedule-out", replay, os.path.join(work, "lost_update.sim")],
                   capture_output=True)
    if not os.path.exists(replay):
        sys.exit("cli_fuzz: could not make a schedule file from examples/lost_update.sim")
    return simc_file, replay


def digest(path):
    try:
        return hashlib.sha256(open(path, "rb").read()).hexdigest() if os.path.isfile(path) else None
    except OSError:
        return None


def run_case(simvm, case, timeout, statuses):
    """The problem with this case, in words, or None; its exit status
    counted in `statuses`."""
    inputs = [case.script] + [case.args[i + 1] for i, a in enumerate(case.args[:-1]) if a == "--replay"]
    before = {p: digest(p) for p in inputs}
    entries = set(os.listdir(case.work))
    try:
        p = subprocess.run([simvm] + case.args, capture_output=True, timeout=timeout, cwd=case.work,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return "no end within %d s" % timeout
    statuses[p.returncode] = statuses.get(p.returncode, 0) + 1
    if p.returncode not in DOCUMENTED_EXITS:
        return "exit status %d (not documented)\n%s" % (p.returncode, p.stderr.decode(errors="replace")[-2000:])
    if SANITIZER.search(p.stderr):
        return "sanitizer report or internal error\n%s" % p.stderr.decode(errors="replace")[-3000:]
    for path, was in before.items():
        if digest(path) != was:
            return "input %s changed" % path
    left = [e for e in set(os.listdir(case.work)) - entries if ".tmp" in e or e.startswith(".")]
    if left:
        return "temporary files left behind: %s" % ", ".join(sorted(left))
    return None


def main():
    ap = argparse.ArgumentParser(description="Run simvm with random argument lists (tests/fuzz/cli_fuzz.py).")
    ap.add_argument("simvm")
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", type=int, help="run case K alone and print its command")
    ap.add_argument("--timeout", type=int, default=60)
    opts = ap.parse_args()
    simvm = os.path.abspath(opts.simvm)
    options = options_from_help(simvm)
    if len(options) < 20:
        sys.exit("cli_fuzz: found only %d options in simvm --help" % len(options))
    failed = 0
    statuses = {}
    with tempfile.TemporaryDirectory(prefix="simvm-cli-fuzz-") as root:
        base = os.path.join(root, "base")
        os.mkdir(base)
        simc_file, replay = prepare(base, simvm)
        cases = [opts.only] if opts.only is not None else range(opts.cases)
        for k in cases:
            work = os.path.join(root, "case%d" % k)
            shutil.copytree(base, work)
            rng = random.Random(opts.seed * 1000003 + k)
            case = Case(rng, work, options, simc_file.replace(base, work), replay.replace(base, work))
            if opts.only is not None:
                print(" ".join(["simvm"] + case.args))
            problem = run_case(simvm, case, opts.timeout, statuses)
            if problem:
                failed += 1
                print("FAIL cli_fuzz case %d (--seed %d --only %d): %s\n  simvm %s" %
                      (k, opts.seed, k, problem, " ".join(repr(a) if not a.isprintable() else a for a in case.args)))
            shutil.rmtree(work, ignore_errors=True)
    print("cli fuzz: %d cases, %d failed (exit statuses: %s)" %
          (len(cases), failed, ", ".join("%d x%d" % (k, statuses[k]) for k in sorted(statuses))))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
