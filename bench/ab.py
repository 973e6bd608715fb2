#!/usr/bin/env python3
"""Two nwreg binaries timed side by side, whole process: each case run 3 times, the binaries
alternating, and the medians and their ratio printed as a Markdown table row.

Usage: bench/ab.py BEFORE AFTER "label|arguments" ...   (arguments split at spaces; run in the
directory the data files are named from)
"""
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    bins = {"before": sys.argv[1], "after": sys.argv[2]}
    print("| command | before | after | before / after |\n|---|---|---|---|")
    for case in sys.argv[3:]:
        label, args = case.split("|", 1)
        ts = {k: [] for k in bins}
        for _ in range(3):
            for k, b in bins.items():
                t0 = time.perf_counter()
                subprocess.run([b] + args.split(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                ts[k].append(time.perf_counter() - t0)
        med = {k: sorted(v)[1] for k, v in ts.items()}
        print(f"| {label} | {med['before']:.2f} s | {med['after']:.2f} s | {med['before'] / med['after']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
