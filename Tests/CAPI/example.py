"""Python on libhapsync through ctypes: a time-scheduled start and a live parameter into a trace,
and an error code with its message.
Usage: python3 example.py PREFIX/lib/libhapsync.so TRACE.jsonl   (prints "start=SECONDS", "ok")"""
import ctypes, sys, time

lib = ctypes.CDLL(sys.argv[1])
lib.hs_engine_current_time.restype = ctypes.c_double
lib.hs_engine_current_time.argtypes = [ctypes.c_void_p]
lib.hs_last_error_message.restype = ctypes.c_char_p
lib.hs_player_start.argtypes = [ctypes.c_void_p, ctypes.c_double]
lib.hs_player_send_parameter.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_float, ctypes.c_double]
lib.hs_player_set_rate.argtypes = [ctypes.c_void_p, ctypes.c_double]

class Config(ctypes.Structure):
    _fields_ = [("haptics", ctypes.c_char_p), ("audio", ctypes.c_char_p)]

def ok(status):
    if status != 0:
        raise RuntimeError(f"status {status}: {lib.hs_last_error_message().decode()}")

config = Config(b"trace:" + sys.argv[2].encode(), b"none")
engine, pattern, player = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
ok(lib.hs_engine_create(ctypes.byref(config), ctypes.byref(engine)))
ok(lib.hs_engine_start(engine))
ahap = b'{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient"}},' \
       b'{"Event":{"Time":0.05,"EventType":"HapticContinuous","EventDuration":0.3}}]}'
ok(lib.hs_pattern_load_memory(ahap, ctypes.c_size_t(len(ahap)), ctypes.byref(pattern)))
ok(lib.hs_player_create(engine, pattern, ctypes.byref(player)))
start = lib.hs_engine_current_time(engine) + 0.2
ok(lib.hs_player_start(player, start))
ok(lib.hs_player_send_parameter(player, b"HapticIntensityControl", 0.5, start + 0.1))
print(f"start={start:.9f}")
time.sleep(0.7)
status = lib.hs_player_set_rate(player, 1000.0)
assert status == 3 and b"rate 1000" in lib.hs_last_error_message(), (status, lib.hs_last_error_message())
ok(lib.hs_engine_stop(engine))
lib.hs_player_destroy(player)
lib.hs_pattern_destroy(pattern)
lib.hs_engine_destroy(engine)
print("ok")
