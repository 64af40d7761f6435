#!/usr/bin/env python3
"""Per row of `--parts overhead`: medians over all repetitions of the rounds
(before-N/, after-N/ beside this script) and the per-repetition ratio ours /
libgomp (samples paired by index within a run), median [min-max]."""
import glob, json, os, statistics as st

here = os.path.dirname(os.path.abspath(__file__))
rows = {}
for side in ("before", "after"):
    for path in sorted(glob.glob(os.path.join(here, f"{side}-*", "omp.json"))):
        res = json.load(open(path))["results"]
        by = {(r["case"], r["variant"]): r["samples"] for r in res if r.get("part") == "overhead"}
        for (case, variant), s in by.items():
            if variant != "maestro-gomp":
                continue
            g = by[(case, "libgomp")]
            d = rows.setdefault(case, {"before": [[], [], []], "after": [[], [], []]})[side]
            d[0] += g
            d[1] += s
            d[2] += [a / b for a, b in zip(s, g)]
print(f"{'case':24} {'libgomp b/a':>15} {'ours before':>11} {'ours after':>10}  {'ratio before':>22}  {'ratio after':>22}")
for case, d in rows.items():
    def r(x):
        return f"{st.median(x):.2f} [{min(x):.2f}-{max(x):.2f}]"
    b, a = d["before"], d["after"]
    print(f"{case:24} {st.median(b[0]):7.4f}/{st.median(a[0]):7.4f} {st.median(b[1]):11.4f} {st.median(a[1]):10.4f}  {r(b[2]):>22}  {r(a[2]):>22}")
