"""Checks a trace written by one of the C API examples: the first tap scheduled at the start the
program printed (a time-scheduled start), and the levels after start + 0.1 s halved by the live
HapticIntensityControl 0.5. Usage: check_trace.py TRACE.jsonl OUTPUT.txt NAME"""
import json, sys

records = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
out = open(sys.argv[2]).read()
name = sys.argv[3]
start = float(next(l for l in out.splitlines() if l.startswith("start=")).split("=")[1])
start_ns = round(start * 1e9)
taps = [r for r in records if r["kind"] == "transient"]
assert taps, f"{name}: no tap in the trace"
assert abs(taps[0]["scheduled_ns"] - start_ns) < 2000, f"{name}: first tap at {taps[0]['scheduled_ns']}, start {start_ns}"
levels = [r for r in records if r["kind"] == "level" and r.get("player") == taps[0]["player"]]
before = [r for r in levels if r["scheduled_ns"] < start_ns + 100_000_000 and r["intensity"] > 0]
after = [r for r in levels if start_ns + 100_000_000 <= r["scheduled_ns"] < start_ns + 340_000_000 and r["intensity"] > 0]
assert before and after, f"{name}: levels before and after the parameter: {len(before)}, {len(after)}"
ratio = after[0]["intensity"] / before[-1]["intensity"]
assert abs(ratio - 0.5) < 0.02, f"{name}: the live parameter scaled levels by {ratio}, not 0.5"
assert records[-1]["kind"] == "stop-all", f"{name}: the trace does not end with the engine's stop"
print(f"{name}: first tap at the scheduled start (off by {taps[0]['scheduled_ns'] - start_ns} ns), levels halved by the live parameter, trace whole")
