"""libhapsync's waveform haptics through ctypes: Assets/clicks.ahap with haptics "waveform:SINK:rear"
and its audio on the same 4-channel sink (a DualSense's layout; HAPSYNC_SINK names it). The sink's
monitor is recorded with parec: the clicks must come out in front, the taps as bursts in the rear,
each burst starting within one sample of its click (found to the sample by the burst's shape).
Usage: python3 waveform.py PREFIX/lib/libhapsync.so Assets/clicks.ahap SINK   (prints "ok")"""
import ctypes, math, os, signal, subprocess, sys, tempfile, time
from array import array

lib_path, ahap, sink = sys.argv[1], sys.argv[2], sys.argv[3]
lib = ctypes.CDLL(lib_path)
lib.hs_last_error_message.restype = ctypes.c_char_p
lib.hs_player_start.argtypes = [ctypes.c_void_p, ctypes.c_double]
lib.hs_pattern_duration.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_double)]

class Config(ctypes.Structure):
    _fields_ = [("haptics", ctypes.c_char_p), ("audio", ctypes.c_char_p)]

def ok(status):
    if status != 0:
        raise RuntimeError(f"status {status}: {lib.hs_last_error_message().decode()}")

raw = tempfile.NamedTemporaryFile(suffix=".raw", delete=False).name
recorder = subprocess.Popen(["parec", "-d", f"{sink}.monitor", "--format=float32le", "--channels=4",
                             "--channel-map=front-left,front-right,rear-left,rear-right", "--rate=48000",
                             "--latency-msec=10", "--raw", raw])
time.sleep(0.3)
config = Config(f"waveform:{sink}:rear".encode(), b"pulse")
engine, pattern, player = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
ok(lib.hs_engine_create(ctypes.byref(config), ctypes.byref(engine)))
ok(lib.hs_engine_start(engine))
ok(lib.hs_pattern_load_file(ahap.encode(), ctypes.byref(pattern)))
duration = ctypes.c_double()
ok(lib.hs_pattern_duration(pattern, ctypes.byref(duration)))
ok(lib.hs_player_create(engine, pattern, ctypes.byref(player)))
ok(lib.hs_player_start(player, 0.0))
time.sleep(0.2)
sinks = subprocess.run(["pactl", "list", "short", "sinks"], capture_output=True, text=True).stdout.splitlines()
index = next(line.split("\t")[0] for line in sinks if line.split("\t")[1] == sink)
inputs = subprocess.run(["pactl", "list", "short", "sink-inputs"], capture_output=True, text=True).stdout.splitlines()
streams = sum(1 for line in inputs if line.split("\t")[1] == index)
assert streams == 1, f"audio and haptics share one stream on the sink: {streams} streams"
time.sleep(duration.value + 0.3)
ok(lib.hs_engine_stop(engine))
lib.hs_player_destroy(player)
lib.hs_pattern_destroy(pattern)
lib.hs_engine_destroy(engine)
time.sleep(0.3)
recorder.send_signal(signal.SIGTERM)
recorder.wait()

samples = array("f")
with open(raw, "rb") as f:
    samples.frombytes(f.read())
os.unlink(raw)
front, rear = samples[0::4], samples[2::4]

def onsets(x, threshold=0.02, quiet=2400):
    found, silent = [], None
    for i, v in enumerate(x):
        if abs(v) > threshold:
            if silent is None or silent >= quiet:
                found.append(i)
            silent = 0
        elif silent is not None:
            silent += 1
    return found

# The burst for a tap of intensity 1, sharpness 0.8 on the DualSense profile (60-300 Hz, log):
# 3 cycles under a Hann window. Its start is the lag that leaves the least residual once the
# burst is scaled to fit (the limiter's gain is not known here).
freq = 60 * (300 / 60) ** 0.8
length = round(3 / freq * 48000)
# Only its first 160 frames: the peak limiter (0.9 of full scale) reshapes the rest.
burst = [(0.5 - 0.5 * math.cos(2 * math.pi * k / length)) * math.sin(2 * math.pi * freq * k / 48000) for k in range(160)]
# Through the synthesizer's DC blocker (a 10 Hz high-pass), as it leaves the synthesizer.
pole, x1, y1 = math.exp(-2 * math.pi * 10 / 48000), 0.0, 0.0
for k, x in enumerate(burst):
    y1 = x - x1 + pole * y1
    x1, burst[k] = x, y1
length = len(burst)
clicks = onsets(front)
offsets = []
for c in clicks:
    crossing = next((i for i in range(c, c + 2400) if abs(rear[i]) > 0.02), None)
    assert crossing is not None, f"no burst near the click at frame {c}"
    tt = sum(t * t for t in burst)
    def residual(lag):
        xt = sum(rear[lag + k] * burst[k] for k in range(length))
        return sum(rear[lag + k] ** 2 for k in range(length)) - xt * xt / tt
    best = min(range(crossing - 96, crossing + 1), key=residual)
    offsets.append(best - c)
print(f"clicks at {clicks}; burst start - click onset: {offsets} samples")
assert len(clicks) == 8, clicks
assert all(o == 0 for o in offsets), offsets
print("ok")
