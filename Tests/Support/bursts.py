"""Where clicks and haptic bursts start in a recording of a 4-channel sink or card: the one
definition the waveform checks share (Tests/CAPI/waveform.py on a sink's monitor,
Tests/VM/check-aloop.py on a real card's other side).

- `onsets`: a click's first frame, over `threshold` after `quiet` frames below it.
- `burst_template`: the burst for a tap of intensity 1 and a sharpness (0.8 unless given) on the
  DualSense profile (60-300 Hz, log): 3 cycles under a Hann window, through the synthesizer's
  10 Hz DC blocker; only its first 160 frames, which the peak limiter (0.9 of full scale) leaves
  alone.
- `burst_start`: the lag at which the template, scaled to fit, leaves the least residual.
"""
import math


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


def burst_template(rate, sharpness=0.8):
    freq = 60 * (300 / 60) ** sharpness
    length = round(3 / freq * rate)
    # Only the first 160 frames: the peak limiter (0.9 of full scale) reshapes the rest.
    burst = [(0.5 - 0.5 * math.cos(2 * math.pi * k / length)) * math.sin(2 * math.pi * freq * k / rate) for k in range(160)]
    pole, x1, y1 = math.exp(-2 * math.pi * 10 / rate), 0.0, 0.0
    for k, x in enumerate(burst):
        y1 = x - x1 + pole * y1
        x1, burst[k] = x, y1
    return burst


def burst_start(rear, click, burst, cut=None, before=96, search_from=None):
    """The burst's first frame near `click`: the lag at which the template, scaled to fit, leaves
    the least residual over one window of frames (from `before` frames before the burst passes
    0.02 to 64 after, every lag seeing only the template's first 160 frames, which the limiter
    leaves alone), ended early at `cut` (where a dropout at the card silenced every channel). The
    burst is looked for from `search_from` (default: the click) to 50 ms after the click. None
    when none starts there, or less than 32 frames of it came before the cut. A slow burst (a low
    sharpness) passes 0.02 later after its start: a larger `before` covers that."""
    end = min(click + 2400, len(rear), cut if cut is not None else len(rear))
    start = click if search_from is None else max(0, search_from)
    crossing = next((i for i in range(start, end) if abs(rear[i]) > 0.02), None)
    if crossing is None:
        return None
    lo = max(0, crossing - before)
    hi = min(lo + len(burst), len(rear), cut if cut is not None else len(rear))
    if hi - click < 32:
        return None

    def fit(lag):
        xt = sum(rear[i] * burst[i - lag] for i in range(max(lo, lag), hi))
        tt = sum(burst[i - lag] ** 2 for i in range(max(lo, lag), hi))
        return xt * xt / tt if tt > 0 else 0.0
    return max(range(lo, crossing + 1), key=fit)
