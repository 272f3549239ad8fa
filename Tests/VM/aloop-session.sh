#!/usr/bin/env bash
# Runs inside .ci/vm-audio-test's VM, chrooted into the host's root (read-only over 9p, with tmpfs
# on /tmp, /run, /root and /dev/shm), with snd-aloop loaded: for each sound server, the Loopback
# card's playback side hw:Loopback,0,0 as a 4-channel sink (FL FR RL RR, float32, 48 kHz) named
# "aloop", Assets/clicks.ahap played on it by `hapsync play` with its haptics as a waveform on the
# rear channels and a trace beside, while aloop-capture records the cable's other side,
# hw:Loopback,1,0. Passes: "pulse" (PulseAudio, --audio pulse), then PipeWire with wireplumber and
# pipewire-pulse: "pipewire-pulse" (--audio pulse) and "pipewire" (--audio pipewire, natively),
# "live": `hapsync live` natively, the card's driver running its sink's graph, a click track
# played into hapsync-live, the sound played on to the card with the haptics on its rear channels;
# and "live-nodelay": `hapsync live --no-delay` natively following the card's sink, the click track
# played straight to the card.
# Everything a pass leaves goes to OUT/PASS.*; the host checks it (Tests/VM/check-aloop.py).
#   aloop-session.sh REPO OUT HAPSYNC CAPTURE
# Prints "== PASS ok" or "== PASS error: ..." per pass; exits 1 when a server could not be set up.
set -uo pipefail
repo=$1 out=$2 hapsync=$3 capture=$4
export HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8
unset PULSE_SERVER DBUS_SESSION_BUS_ADDRESS
cd "$repo" || exit 1
sink=aloop
channel_map=front-left,front-right,rear-left,rear-right
status=0

grep -q "Loopback" /proc/asound/cards || { echo "== error: no Loopback card in /proc/asound/cards (snd-aloop did not load)"; exit 1; }
ls /dev/snd/pcmC*D0p /dev/snd/pcmC*D1c >/dev/null 2>&1 || { echo "== error: no /dev/snd nodes for the Loopback card's PCMs"; exit 1; }
echo "== cards: $(tr -s ' \n' ' ' < /proc/asound/cards)"
echo "== clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"

# The sink must be the Loopback card with 4 channels in a DualSense's layout, as the server says.
check_sink() {
  local server=$1 spec
  for _ in $(seq 100); do pactl list short sinks 2>/dev/null | grep -q "^[0-9]*	$sink	" && break; sleep 0.1; done
  spec=$(pactl list sinks 2>/dev/null | awk -v s="$sink" '/^Sink #/ {on=0} $1 == "Name:" {on=($2 == s)} on')
  if [ -z "$spec" ]; then
    echo "== error: $server did not make a sink '$sink' for the Loopback card; its sinks:"
    pactl list short sinks 2>&1 | sed 's/^/   /'
    return 1
  fi
  echo "$spec" | grep -q "Sample Specification: float32le 4ch 48000Hz" && echo "$spec" | grep -q "Channel Map: $channel_map" || {
    echo "== error: $server's sink '$sink' is not float32le 4ch 48000Hz $channel_map:"
    echo "$spec" | grep -E "Sample Specification|Channel Map|Driver|api.alsa.path|device.string" | sed 's/^/   /'
    return 1
  }
  echo "== $server sees the Loopback card: $(echo "$spec" | grep -E "Description:|Sample Specification:|Channel Map:" | sed 's/^[[:space:]]*//' | tr '\n' ';')"
}

# One measured play: the capture of the cable's other side runs from before the play to after it.
measure() {
  local pass=$1 audio=$2 cap rc
  rm -f "$out/$pass".*
  "$capture" hw:Loopback,1,0 4 48000 8 "$out/$pass.capture" > "$out/$pass.capture.log" 2>&1 &
  cap=$!
  sleep 0.4
  kill -0 "$cap" 2>/dev/null || { echo "== $pass error: the capture did not start: $(cat "$out/$pass.capture.log")"; return 1; }
  # What the server opened on the card, half-way through.
  (sleep 1.2; cat /proc/asound/Loopback/pcm0p/sub0/hw_params /proc/asound/Loopback/pcm0p/sub0/sw_params > "$out/$pass.card-params" 2>&1) &
  local params=$!
  "$hapsync" play --audio "$audio" --sink "$sink" --haptics "waveform:$sink:rear" --haptics "trace:$out/$pass.trace.jsonl" \
    --force Assets/clicks.ahap > "$out/$pass.play.log" 2>&1
  rc=$?
  sleep 0.4
  kill -TERM "$cap" 2>/dev/null
  wait "$cap"
  local caprc=$?
  wait "$params"
  sed "s/^/$pass play: /" "$out/$pass.play.log"
  echo "$pass card: $(grep -E "^(format|channels|rate|period_size|buffer_size):" "$out/$pass.card-params" | tr -s ' \n' ' ')"
  sed "s/^/$pass capture: /" "$out/$pass.capture.log"
  [ "$rc" = 0 ] || { echo "== $pass error: hapsync play exited $rc"; return 1; }
  [ "$caprc" = 0 ] || { echo "== $pass error: the capture exited $caprc"; return 1; }
  echo "== $pass ok"
}

# The live pass: `hapsync live` natively on PipeWire, playing on to the card with its haptics'
# drive on the rear channels (the card's driver runs the live sink's graph), while paplay plays a
# click track into hapsync-live: 8 decaying 180 Hz bursts every 0.25 s from 0.25 s, each
# starting at full phase (its first sample its loudest, so its first frame is found exactly).
measure_live() {
  local pass=live track=/tmp/live-clicks.wav
  rm -f "$out/$pass".*
  python3 - "$track" <<'PY' || { echo "== $pass error: could not write the click track"; return 1; }
import math, struct, sys, wave
rate, clicks, spacing = 48000, 8, 0.25
x = [0.0] * int((0.5 + spacing * clicks) * rate)
for k in range(clicks):
    start = int((0.25 + spacing * k) * rate)
    for i in range(rate * 3 // 100):
        x[start + i] = 0.8 * math.exp(-i / (rate / 250)) * math.cos(2 * math.pi * 180 * i / rate)
with wave.open(sys.argv[1], "wb") as w:
    w.setnchannels(1)
    w.setsampwidth(2)
    w.setframerate(rate)
    w.writeframes(b"".join(struct.pack("<h", round(v * 32767)) for v in x))
PY
  run_live "$pass" hapsync-live --haptics "waveform:$sink:rear"
}

# RUN_LIVE PASS DEVICE [ARGS...]: `hapsync live --audio pipewire --sink aloop ARGS` with a trace
# and an onset log, while the card's other side is recorded and, once it runs, paplay plays the
# click track to DEVICE; then both ended. Prints the run and "== PASS ok" or "== PASS error".
run_live() {
  local pass=$1 device=$2 cap live rc track=/tmp/live-clicks.wav
  shift 2
  "$capture" hw:Loopback,1,0 4 48000 20 "$out/$pass.capture" > "$out/$pass.capture.log" 2>&1 &
  cap=$!
  sleep 0.4
  kill -0 "$cap" 2>/dev/null || { echo "== $pass error: the capture did not start: $(cat "$out/$pass.capture.log")"; return 1; }
  "$hapsync" live --audio pipewire --sink "$sink" --seconds 12 "$@" \
    --haptics "trace:$out/$pass.trace.jsonl" --onsets "$out/$pass.onsets.jsonl" --force > "$out/$pass.play.log" 2>&1 &
  live=$!
  for _ in $(seq 150); do grep -q "Ctrl-C stops" "$out/$pass.play.log" 2>/dev/null && break; kill -0 "$live" 2>/dev/null || break; sleep 0.1; done
  local problem=""
  if grep -q "Ctrl-C stops" "$out/$pass.play.log" 2>/dev/null; then
    sleep 0.5
    paplay --device="$device" "$track" > "$out/$pass.paplay.log" 2>&1 || problem="paplay exited $?: $(cat "$out/$pass.paplay.log")"
    sleep 0.5
  else
    problem="hapsync live did not say its capture runs within 15 s"
  fi
  # SIGTERM: a background job of this non-interactive shell starts with SIGINT ignored.
  kill -TERM "$live" 2>/dev/null
  wait "$live"
  rc=$?
  sleep 0.4
  kill -TERM "$cap" 2>/dev/null
  wait "$cap"
  local caprc=$?
  sed "s/^/$pass live: /" "$out/$pass.play.log"
  sed "s/^/$pass capture: /" "$out/$pass.capture.log"
  [ -z "$problem" ] || { echo "== $pass error: $problem"; return 1; }
  # Ended by the TERM it was sent: 143, as the shell's own code for it (0: its --seconds came first).
  [ "$rc" = 0 ] || [ "$rc" = 143 ] || { echo "== $pass error: hapsync live exited $rc"; return 1; }
  [ "$caprc" = 0 ] || { echo "== $pass error: the capture exited $caprc"; return 1; }
  echo "== $pass ok"
}

# The no-delay pass: `hapsync live --no-delay` natively on PipeWire following the card's sink
# (its monitor recorded in the card's graph, the card's driver running it), while paplay plays the
# live pass's click track straight to the card: each transient's time against when the card
# played its click, and the summary's lag against that.
measure_nodelay() {
  local pass=live-nodelay
  rm -f "$out/$pass".*
  [ -f /tmp/live-clicks.wav ] || { echo "== $pass error: no click track (the live pass writes it)"; return 1; }
  run_live "$pass" "$sink" --no-delay
}

# Pass 1: PulseAudio, as .ci/with-pulse starts it, with the Loopback card as its only sink.
pulse_pass() {
  export XDG_RUNTIME_DIR=/run/pulse-pass
  mkdir -m 700 -p "$XDG_RUNTIME_DIR"
  pulseaudio -n --daemonize=no --exit-idle-time=-1 --disallow-exit --log-level=notice \
    -L "module-native-protocol-unix auth-anonymous=1" > "$out/server-pulseaudio.log" 2>&1 &
  local pid=$!
  for _ in $(seq 200); do pactl info >/dev/null 2>&1 && break; sleep 0.05; done
  if ! pactl info >/dev/null 2>&1; then
    echo "== pulse error: PulseAudio did not answer"; cat "$out/server-pulseaudio.log"; kill "$pid"; return 1
  fi
  # In a VM PulseAudio drives the card by its period interrupts, not by timer (tsched), with a
  # fixed latency of all its fragments: 4 of 25 ms by default. A desktop's tsched sink follows
  # the 20 ms its streams ask for; 4 fragments of 5 ms stand for that here.
  if ! pactl load-module module-alsa-sink device=hw:Loopback,0,0 sink_name=$sink rate=48000 format=float32le channels=4 \
      channel_map=$channel_map fragments=4 fragment_size=3840 > /dev/null 2> "$out/pulse-load.log"; then
    echo "== pulse error: PulseAudio could not open hw:Loopback,0,0 as a 4-channel sink: $(cat "$out/pulse-load.log")"
    cat "$out/server-pulseaudio.log"; kill "$pid"; return 1
  fi
  local r=0
  if check_sink PulseAudio; then measure pulse pulse || r=1; else r=1; fi
  kill "$pid"; wait "$pid" 2>/dev/null
  return $r
}

# Pass 2: PipeWire, wireplumber and pipewire-pulse, as .ci/with-pipewire starts them, with the
# card as an ALSA sink node made from a config fragment (no udev in the VM for wireplumber's ALSA
# monitor to find cards by, so that monitor is off and cannot open the card a second time).
pipewire_pass() {
  local runtime=/run/pipewire-pass pids=() r=0
  mkdir -m 700 -p "$runtime" "$runtime/pulse"
  export XDG_RUNTIME_DIR=$runtime
  mkdir -p "$runtime/config/pipewire/pipewire.conf.d" "$runtime/config/pipewire/pipewire-pulse.conf.d" \
    "$runtime/config/wireplumber/main.lua.d" "$runtime/state"
  # In a VM PipeWire raises its smallest quantum to 1024 frames (vm.overrides); on the desktop
  # this stands for, it is 32, and a stream's 20 ms latency gives a 512-frame quantum.
  cat > "$runtime/config/pipewire/pipewire-pulse.conf.d/50-hapsync-desktop.conf" <<CONF
pulse.properties = { vm.overrides = { pulse.min.quantum = 32/48000 } }
CONF
  cat > "$runtime/config/pipewire/pipewire.conf.d/50-hapsync-aloop.conf" <<CONF
context.properties = { vm.overrides = { default.clock.min-quantum = 32 } }
context.objects = [
  { factory = adapter
    args = {
      factory.name     = api.alsa.pcm.sink
      node.name        = "$sink"
      node.description = "Loopback card, 4 channels"
      media.class      = "Audio/Sink"
      api.alsa.path    = "hw:Loopback,0,0"
      audio.format     = "F32LE"
      audio.rate       = 48000
      audio.channels   = 4
      audio.position   = [ FL FR RL RR ]
      priority.driver  = 2000
      priority.session = 2000
    }
  }
]
CONF
  echo "alsa_monitor.enabled = false" > "$runtime/config/wireplumber/main.lua.d/51-hapsync-no-alsa-monitor.lua"
  # Nor bluetooth, whose logind watcher needs /run/systemd (absent here) and would stop wireplumber.
  mkdir -p "$runtime/config/wireplumber/bluetooth.lua.d"
  echo "bluez_monitor.enabled = false" > "$runtime/config/wireplumber/bluetooth.lua.d/51-hapsync-no-bluez.lua"
  local daemon_env=(XDG_STATE_HOME="$runtime/state" XDG_CONFIG_HOME="$runtime/config")
  pids+=("$(dbus-daemon --session --address="unix:path=$runtime/bus" --fork --print-pid)")
  export DBUS_SESSION_BUS_ADDRESS="unix:path=$runtime/bus"
  env "${daemon_env[@]}" pipewire > "$out/server-pipewire.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 200); do [ -S "$runtime/pipewire-0" ] && break; sleep 0.05; done
  env "${daemon_env[@]}" wireplumber > "$out/server-wireplumber.log" 2>&1 &
  pids+=($!)
  env "${daemon_env[@]}" pipewire-pulse > "$out/server-pipewire-pulse.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 300); do pactl info >/dev/null 2>&1 && break; sleep 0.05; done
  if ! pactl info >/dev/null 2>&1; then
    echo "== pipewire error: pipewire-pulse did not answer"; r=1
  elif check_sink PipeWire; then
    measure pipewire-pulse pulse || r=1
    measure pipewire pipewire || r=1
    measure_live || r=1
    measure_nodelay || r=1
  else
    r=1
  fi
  [ "$r" = 0 ] || for f in pipewire wireplumber pipewire-pulse; do sed "s/^/$f: /" "$out/server-$f.log"; done
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null; done
  for pid in "${pids[@]}"; do for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done; done
  unset DBUS_SESSION_BUS_ADDRESS
  return $r
}

pulse_pass || status=1
pipewire_pass || status=1
exit $status
