#!/bin/bash
# scripts/wtrack-minimize's ddmin and simplification over synthetic
# predicates (no boot): the result is 1-minimal (every list left loses
# "data" and none with one op fewer does), it is exactly the culprits when
# the predicate is monotone, and the number of trials on known inputs is
# the one worked out by hand (doc/ops.md "Minimizing a damaged run").
. "$(dirname "$0")/lib.sh"
require_tools python3
export PYTHONDONTWRITEBYTECODE=1
plan 12

while IFS=$'\t' read -r verdict name detail; do
  case $verdict in
    PASS) ok "$name" ;;
    FAIL) not_ok "$name: $detail" ;;
    *) not_ok "the python part printed: $verdict $name $detail" ;;
  esac
done < <(python3 - "$TOP/scripts/wtrack-minimize" 2>&1 <<'PY'
import importlib.machinery, importlib.util, itertools, random, sys
loader = importlib.machinery.SourceFileLoader("wtm", sys.argv[1])
spec = importlib.util.spec_from_loader("wtm", loader)
m = importlib.util.module_from_spec(spec)
loader.exec_module(m)
D, C, E = m.DAMAGED, m.CLEAN, m.ERROR

def report(name, good, detail=""):
    print(("PASS" if good else "FAIL") + "\t" + name + "\t" + str(detail))

class Oracle:
    """A predicate over tuples of indices, counting the distinct lists asked
    (as the driver's cache does) and, optionally, a budget."""
    def __init__(self, fails, budget=None):
        self.fails, self.asked, self.budget = fails, {}, budget
    def __call__(self, cands):
        new = [c for c in dict.fromkeys(cands) if c not in self.asked]
        if self.budget is not None and len(self.asked) + len(new) > self.budget:
            raise m.OutOfBudget("budget")
        for c in new:
            self.asked[c] = self.fails(c)
        return [self.asked[c] for c in cands]

def contains(culprits):
    return lambda c: D if set(culprits) <= set(c) else C

# one culprit of 8: [0-3] clean, [4-7] damaged, [4,5] damaged, [4] clean, [5] damaged
o = Oracle(contains([5]))
best, done = m.ddmin(range(8), o, jobs=1)
report("one culprit of 8: found alone", best == (5,) and done, best)
report("one culprit of 8: 5 trials", len(o.asked) == 5, len(o.asked))
# --jobs 2: both halves of every split run at once: 6 trials
o = Oracle(contains([5]))
best, _ = m.ddmin(range(8), o, jobs=2)
report("one culprit of 8, jobs 2: found, in 6 trials", best == (5,) and len(o.asked) == 6,
       (best, len(o.asked)))
# every op needed, 4 of them: 2 halves, 4 singles, 4 complements
o = Oracle(contains([0, 1, 2, 3]))
best, _ = m.ddmin(range(4), o, jobs=1)
report("all 4 needed: kept whole, in 10 trials", best == (0, 1, 2, 3) and len(o.asked) == 10,
       (best, len(o.asked)))
# monotone predicates: the 1-minimal list is exactly the culprits
rng = random.Random(7)
bad = []
for _ in range(200):
    n = rng.randint(1, 40)
    culprits = sorted(rng.sample(range(n), rng.randint(1, min(4, n))))
    o = Oracle(contains(culprits))
    best, _ = m.ddmin(range(n), o, jobs=rng.choice([1, 2, 3]))
    if list(best) != culprits:
        bad.append((n, culprits, best))
report("200 monotone predicates: exactly the culprits", not bad, bad[:3])
# any predicate (a random truth over lists, the whole list damaged):
# 1-minimal against the oracle itself
bad = []
for trial in range(300):
    n = rng.randint(2, 10)
    salt = rng.random()
    full = tuple(range(n))
    truth = lambda c, s=salt, f=full: D if c == f or hash((c, s)) % 3 == 0 else C
    o = Oracle(truth)
    best, _ = m.ddmin(range(n), o, jobs=rng.choice([1, 2]))
    fails = truth(best) == D
    one_less = [tuple(x for x in best if x != y) for y in best]
    minimal = all(truth(c) != D for c in one_less if c) or len(best) == 1
    if not fails or not minimal:
        bad.append((n, best))
report("300 arbitrary predicates: the result fails, none with one op fewer does", not bad, bad[:3])
# trials on a known input: within ddmin's n^2 bound on 40 ops
o = Oracle(contains([3, 17, 33]))
best, _ = m.ddmin(range(40), o, jobs=1)
report(f"3 culprits of 40: found in {len(o.asked)} trials (at most 40^2)",
       best == (3, 17, 33) and len(o.asked) <= 1600, len(o.asked))
# an error is neither: the culprit is still found around it
o = Oracle(lambda c: E if c == (4, 5, 6, 7) else contains([5])(c))
best, _ = m.ddmin(range(8), o, jobs=1)
report("a trial that errors counts as not damaged, the culprit is found", best == (5,), best)
# the budget: the best damaged list so far, and not done
o = Oracle(contains([5]), budget=3)
best, done = m.ddmin(range(8), o, jobs=1)
report("out of budget (3 trials): not done, the smallest damaged list so far", not done and best == (4, 5),
       (best, done))
# the simplification's candidates: towards the page, then the sector
fields = dict(m.simpler_lines("f1 mwrite -e 0x26578 0x226", 0x40000, 4096))
report("simpler offsets of an mwrite: the page, then the sector",
       fields.get(3) == ["f1 mwrite -e 0x26000 0x226", "f1 mwrite -e 0x26400 0x226"], fields.get(3))
report("simpler lengths: a page, then sectors up and down",
       fields.get(4) == ["f1 mwrite -e 0x26578 0x1000", "f1 mwrite -e 0x26578 0x400",
                         "f1 mwrite -e 0x26578 0x200"], fields.get(4))
fields = dict(m.simpler_lines("f1 pwrite 0x3f800 0x700", 0x40000, 4096))
report("no candidate past the size limit", all(int(l.split()[2], 0) + int(l.split()[3], 0) <= 0x40000
       for ls in fields.values() for l in ls), fields)
PY
)
done_testing
