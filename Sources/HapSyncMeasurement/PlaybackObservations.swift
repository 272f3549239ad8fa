/// Observations "recorded frame F was played at CLOCK_MONOTONIC time T", in frame order, and what a
/// measurement reads from them: when any frame was played, and where the recording jumped.
///
/// `PulseAudioRecorder` adds one every 10 ms from the server's timing info, `PipeSinkReader` one per
/// read of its pipe. Pure: tests feed it made-up observations.
public struct PlaybackObservations: Sendable {
    /// Frames per second of the recording.
    public let sampleRate: Double
    /// The observed frames, strictly increasing.
    public private(set) var frames: [Int64] = []
    /// When each of `frames` was played (CLOCK_MONOTONIC ns).
    public private(set) var times: [UInt64] = []
    /// Whether the sink's timeline may step (a jump of the observations against the nominal rate
    /// that lasts): for a sink whose frames are heard as they are written, where a graph whose
    /// cycle changed length moves every frame after it by the change (PipeWire before 0.3.68:
    /// `PipeSinkReader`'s `.asWritten`). A frame is then timed by the observations at the level
    /// of its own side of a step (the median, against the nominal rate, of its block's read and
    /// the four after it, or the four before it when only those agree with it), not the level
    /// of the whole window, which a step leaves to whichever side has more of them.
    public var splitsAtSteps = false

    /// No observations yet, with room for `capacity` of them.
    public init(sampleRate: Double, capacity: Int = 0) {
        self.sampleRate = sampleRate
        frames.reserveCapacity(capacity)
        times.reserveCapacity(capacity)
    }

    /// Adds "frame `frame` was played at `time`"; one not after the last frame (a stale reply) is
    /// dropped, so the frames stay in order for the binary search.
    public mutating func append(frame: Int64, time: UInt64) {
        if let last = frames.last, frame <= last { return }
        frames.append(frame)
        times.append(time)
    }

    /// When `frame` was played (CLOCK_MONOTONIC ns), from a least-squares line through the
    /// observations within ±0.5 s of it and in its stretch of continuous play (none across a
    /// pause of the sink), leaving out those more than 1 ms off the line at the nominal rate
    /// through their median (with `splitsAtSteps`, through the median of the reads on the
    /// frame's own side of a step): reads the recording thread made late (a reader starved for 30 ms
    /// among the 23 reads of a 2048-frame quantum moved a least-squares line by 1.3 ms and tilted
    /// it, so that a second fit around that line threw away the good reads). Nil with fewer than
    /// 8 observations around it that agree.
    public func heardTime(ofFrame frame: Int64) -> UInt64? {
        let window = Int64(sampleRate / 2)
        // Observations are in frame order: find the window by binary search.
        var lo = 0, hi = frames.count
        while lo < hi { let mid = (lo + hi) / 2; if frames[mid] < frame - window { lo = mid + 1 } else { hi = mid } }
        var end = lo
        while end < frames.count, frames[end] <= frame + window { end += 1 }
        // Only the observations of the frame's own stretch of continuous play: where the sink
        // paused (suspended while nothing played), the frames after it are heard on another line.
        var mid = lo
        if lo < end {
            while mid + 1 < end, frames[mid + 1] <= frame { mid += 1 }
            var first = mid, last = mid
            while first > lo, !paused(between: first - 1, and: first) { first -= 1 }
            while last + 1 < end, !paused(between: last, and: last + 1) { last += 1 }
            lo = first
            end = last + 1
        }
        let near = lo..<end
        guard near.count >= 8 else { return nil }
        let ref = Double(times[lo])
        func fit(_ use: (Int) -> Bool) -> (slope: Double, intercept: Double)? {
            var sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0, k = 0.0
            for i in near where use(i) {
                let x = Double(frames[i] - frame), y = Double(times[i]) - ref
                sx += x; sy += y; sxx += x * x; sxy += x * y; k += 1
            }
            let d = k * sxx - sx * sx
            guard k >= 8, d > 0 else { return nil }
            let slope = (k * sxy - sx * sy) / d
            return (slope, (sy - slope * sx) / k)
        }
        // The robust start: the median offset of the observations from the nominal rate (half of
        // them may be late without moving it), of the whole window, or where the timeline steps,
        // of the frame's side of a step: the median of its block's read and the four after it,
        // unless that read agrees only with the four before it (the last block before a step).
        // Medians of five: two late reads among them do not move them; a late read of the
        // frame's own block (which agrees with neither) is taken to open what follows.
        let level: Double
        if splitsAtSteps {
            let after = medianOffset(mid..<min(end, mid + 5)), before = medianOffset(max(lo, mid - 4)..<(mid + 1))
            let own = offset(mid)
            let beforeIsWhole = mid - 4 >= lo, afterIsWhole = mid + 5 <= end
            level = beforeIsWhole && abs(own - before) <= 1_000_000 && (abs(own - after) > 1_000_000 || !afterIsWhole) ? before : after
        } else {
            level = medianOffset(near)
        }
        guard let line = fit({ i in abs(offset(i) - level) <= 1_000_000 }) else { return nil }
        return UInt64(max(0, ref + line.intercept))
    }

    /// When observation `i` was heard less when the nominal rate from frame 0 puts it, ns.
    private func offset(_ i: Int) -> Double { Double(times[i]) - Double(frames[i]) * 1e9 / sampleRate }

    /// The median `offset` of observations `reads` (not empty).
    private func medianOffset(_ reads: Range<Int>) -> Double {
        let sorted = reads.map(offset).sorted()
        return sorted[sorted.count / 2]
    }

    /// Whether the sink stopped playing between observations `i` and `j` (i < j): the clock moved
    /// on more than 50 ms beyond the frames played in between.
    private func paused(between i: Int, and j: Int) -> Bool {
        Double(times[j]) - Double(times[i]) - Double(frames[j] - frames[i]) / sampleRate * 1e9 > 50_000_000
    }

    /// Places where the observations jump by more than 2 ms against the line through their
    /// neighbours (the median offset from the nominal rate over 40 observations before and 40
    /// after): frames lost or repeated by the server (an overrun, a rewind). Each is (recorded
    /// frame, jump in ns). A trustworthy measurement has none near its clicks.
    public var discontinuities: [(frame: Int64, jump: Double)] {
        var result: [(Int64, Double)] = []
        let span = 40
        guard frames.count > 2 * span else { return [] }
        var i = span
        while i < frames.count - span {
            // Median offset from nominal before and after i.
            let jump = medianOffset(i..<(i + span)) - medianOffset((i - span)..<i)
            if abs(jump) > 2_000_000 {
                result.append((frames[i], jump))
                i += span
            } else {
                i += 1
            }
        }
        return result
    }
}
