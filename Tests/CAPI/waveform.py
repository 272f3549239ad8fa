"""libhapsync's waveform haptics through ctypes: Assets/clicks.ahap with haptics "waveform:SINK:rear"
and its audio on the same 4-channel sink (a DualSense's layout; HAPSYNC_SINK names it). The sink's
monitor is recorded with parec: the clicks must come out in front, the taps as bursts in the rear,
each burst starting within one sample of its click (found to the sample by the burst's shape).
Usage: python3 waveform.py PREFIX/lib/libhapsync.so Assets/clicks.ahap SINK   (prints "ok")"""
import ctypes, os, signal, subprocess, sys, tempfile, time
from array import array

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Support"))
from bursts import burst_start, burst_template, onsets  # noqa: E402

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

burst = burst_template(48000)
clicks = onsets(front)
offsets = []
for c in clicks:
    start = burst_start(rear, c, burst)
    assert start is not None, f"no burst near the click at frame {c}"
    offsets.append(start - c)
print(f"clicks at {clicks}; burst start - click onset: {offsets} samples")
assert len(clicks) == 8, clicks
assert all(o == 0 for o in offsets), offsets
print("ok")
