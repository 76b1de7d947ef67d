#!/usr/bin/env python3
"""A stand-in for tests/faults/check.py while that checker is written:
runs `redeemctl verify` on the run's database (G1-G8) and nothing else.
run.sh uses it only when check.py does not exist.

Usage: check_standin.py --out OUT
"""

import argparse
import json
import os
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--out", required=True)
ap.add_argument("--redeemctl", default=None)
a = ap.parse_args()
with open(os.path.join(a.out, "setup.json")) as f:
    setup = json.load(f)
env = dict(os.environ, REDEEM_DB=setup["dsn"])
p = subprocess.run([a.redeemctl or os.path.join(setup["bin"], "redeemctl"),
                    "verify"],
                   env=env, capture_output=True, text=True)
sys.stdout.write(p.stdout + p.stderr)
print(f"check (stand-in: redeemctl verify only): "
      f"{'ok' if p.returncode == 0 else 'VIOLATIONS'}")
sys.exit(0 if p.returncode == 0 else 1)
