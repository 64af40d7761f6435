"""Summary of ab.sh's runs: tx/s per build, and after ÷ before within each
repetition (median [min–max]), per terminal count; writes summary.json."""
import json, glob, re, statistics, collections
runs = collections.defaultdict(dict)
for f in glob.glob('raw/*.json'):
    b, t, rep = re.match(r'raw/(\w+)-t(\d+)-rep(\d+)\.json', f).groups()
    d = json.load(open(f))
    tps = next(r['value'] for r in d['results'] if r['metric'] == 'transactions_per_second')
    runs[int(t)].setdefault(int(rep), {})[b] = tps
summary = {}
for t in sorted(runs):
    reps = runs[t]
    before = [reps[r]['before'] for r in sorted(reps)]
    after = [reps[r]['after'] for r in sorted(reps)]
    ratios = [reps[r]['after'] / reps[r]['before'] for r in sorted(reps)]
    summary[t] = {
        'before_tps': before, 'after_tps': after, 'ratios': ratios,
        'before_median': statistics.median(before), 'after_median': statistics.median(after),
        'ratio_median': statistics.median(ratios), 'ratio_min': min(ratios), 'ratio_max': max(ratios),
    }
    print(f"T={t}: before {statistics.median(before):.0f} [{min(before):.0f}-{max(before):.0f}] "
          f"after {statistics.median(after):.0f} [{min(after):.0f}-{max(after):.0f}] tx/s; "
          f"after/before {statistics.median(ratios):.2f} [{min(ratios):.2f}-{max(ratios):.2f}]")
json.dump(summary, open('summary.json', 'w'), indent=1)
