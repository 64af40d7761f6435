#!/usr/bin/env python3
"""Per row of `--parts overhead`: medians over the repetitions of run-*/ beside
this script and the per-repetition ratio maestro-gomp / libgomp (samples
paired by index within a run), median [min-max]."""
import glob, json, os, statistics as st

here = os.path.dirname(os.path.abspath(__file__))
rows = {}
for path in sorted(glob.glob(os.path.join(here, "run-*", "omp.json"))):
    by = {(r["case"], r["variant"]): r["samples"]
          for r in json.load(open(path))["results"] if r.get("part") == "overhead"}
    for (case, variant), s in by.items():
        if variant != "maestro-gomp":
            continue
        g = by[(case, "libgomp")]
        d = rows.setdefault(case, [[], [], []])
        d[0] += g
        d[1] += s
        d[2] += [a / b for a, b in zip(s, g)]
print(f"{'case':24} {'libgomp':>8} {'ours':>8}  {'ours / libgomp':>22}  reps")
for case, (g, s, r) in rows.items():
    print(f"{case:24} {st.median(g):8.4f} {st.median(s):8.4f}  "
          f"{st.median(r):.2f} [{min(r):.2f}-{max(r):.2f}]  {len(r)}")
