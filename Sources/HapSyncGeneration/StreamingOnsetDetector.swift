import Foundation

/// One onset a `StreamingOnsetDetector` found: where in the stream a sound starts, how strongly,
/// how loud it is felt and how bright it is.
public struct StreamingOnset: Sendable, Equatable {
    /// The input frame where the sound starts (0 is the first frame `process` was given): the
    /// 1 ms step where its energy rises, as `Onset.time` marks it; never more than `lookAhead`
    /// before `decidedAt`.
    public var frame: Int64
    /// The input frame whose arrival decided the onset: the `process` call holding this frame
    /// reports it. `decidedAt - frame` is at most the detector's `lookAhead.frames`.
    public var decidedAt: Int64
    /// Onset strength: the flux peak over the adaptive threshold (without its floor), as
    /// `Onset.strength`: > 1 unless the floor decided.
    public var strength: Double
    /// How strongly the sound is felt, 0...1, for a haptic intensity: its felt loudness (low
    /// frequencies weighted as `FrameAnalysis.feltWeight` weighs them), the loudest 5 ms step from
    /// its start to `decidedAt`, mapped linearly from 50 dB below the detector's running felt
    /// reference (0) to that reference (1). The reference is the loudest felt 5 ms step lately:
    /// instant rise, falling 1 dB a second, not below −40 dBFS (a whisper after silence stays
    /// faint).
    public var loudness: Double
    /// Spectral centroid, Hz, of the analysis frame ending at `decidedAt` (0 in silence), for
    /// `HapticGenerator.sharpness(centroid:)`.
    public var centroid: Double

    /// `frame` in seconds from frame 0, at `sampleRate` frames a second.
    public func time(sampleRate: Double) -> Double { Double(frame) / sampleRate }
}

/// The felt level of one hop (5 ms) of a stream, as a `StreamingOnsetDetector` measured it: what
/// `hapsync live`'s continuous layer follows (with `LevelFollower` and `SharpnessFollower`).
public struct StreamingLevel: Sendable, Equatable, BitwiseCopyable {
    /// The input frame at the hop's middle (the caller's numbering, as onsets').
    public var frame: Int64
    /// The hop's felt loudness on the onsets' scale (`StreamingOnset.loudness`), 0...1, unsmoothed.
    public var loudness: Double
    /// Spectral centroid, Hz, of the analysis frame ending with the hop (0 in silence).
    public var centroid: Double
}

/// Onset detection on a stream as it plays (`hapsync live`): `OnsetDetector`'s method made
/// causal, so that each onset is reported at most `lookAhead` (15 ms) after its sound starts,
/// whatever size the chunks come in.
///
/// Step by step beside `OnsetDetector` (the same bands, gates, threshold rules and refinement;
/// what changes is only what a stream cannot know yet):
/// 1. Input: interleaved frames of 1 to 8 channels mixed to mono (their mean); a NaN or infinite
///    sample reads as 0 and is counted (`nonFiniteSamples`), one beyond ±10,000 is held there.
///    Then `FrameAnalysis.prepared`'s DC blocker (one-pole high-pass at 10 Hz, started at the
///    first sample's level).
/// 2. Every `hop` (5 ms), the `FrameAnalysis.size` samples (21 ms) up to the newest,
///    Hann-windowed, and the low bands' frame twice as long of the signal decimated the same way
///    (its CIC filter run causally, a quarter of a millisecond late at 48 kHz); the same third
///    octaves from 30 Hz to 16 kHz, log(1 + 100 · mean magnitude / reference). The low frame
///    reaches 1/8 of its length (5 ms) past the newest sample, read as silence: its window's peak
///    sits nearer the newest sound (the offline low frame, centred with the short one, reaches
///    21 ms past it), and more low hits are found in time. The reference is a
///    running sample peak (instant rise, falling 1 dB a second, not below −60 dBFS), not the
///    file's peak; every level a rise compares is taken with the reference of the moment, so a
///    hit that raises it is measured against its past on one scale.
/// 3. Each band's rise: its mean level over the newest 15 ms of frames over the largest of its own
///    and its neighbours' mean levels over 20 ms of frames ending 5 ms before those (the offline
///    lag is 10 ms; half of it, the frames compared still overlapping, shows a rise sooner). Less
///    the band's gate, `bandGate` × its noise deviation (the scaled MAD of its level's 20 ms
///    second differences ÷ √6, at most 1/√bins), estimated every other frame from the past only
///    and from frames where the band has sound (digital silence has no ripple, and would hold
///    the gate at 0 for the sound after it): the larger of the estimates over the last 250 ms
///    and the last 150 ms (the offline window sees a sound's own tail ahead; a window of the past
///    must catch up with it soon). Weighted by √(bins/16) up to 1 and summed: the flux.
/// 4. Adaptive threshold over the past only: the flux of the last 250 ms (this frame's included,
///    silence before the stream) gives `median + δ · 1.4826 · MAD`, 1.5 × the median and the floor
///    0.3 · (1.5 − sensitivity), δ as the offline detector's.
/// 5. Peak pick: a flux above the threshold and at least every value of the 30 ms before it starts
///    a candidate, which follows the flux while it rises and is decided when it stops rising, or
///    when waiting one hop more would decide it later than `lookAhead` after its start. After a
///    decision cut short that way the flux must fall before another candidate starts.
/// 6. Its start: among 1 ms energy steps up to the decision, the one that rises most over the
///    3-15 ms before it, walked back to where the rise began, plain or first-differenced: the
///    offline refinement, over the `lookAhead` before the decision and 15 ms more. A start more
///    than `lookAhead` before the decision (a sound whose flux built up slowly) is reported
///    `lookAhead` before it: late, never later than promised.
/// 7. Minimum gap: a candidate starting less than `minimumGap` after the last onset reported is
///    dropped (the first of two stays: a stream cannot take back what it reported; the offline
///    detector keeps the stronger). Quiet floor: a candidate whose sound (unweighted, 5 ms steps
///    from its start to the decision) stays more than `OnsetDetector.quietestOnset` below a running
///    level reference (instant rise, 1 dB a second fall, not below −60 dBFS) is dropped, as the
///    offline detector drops one far below the file's loudest frame.
///
/// `hapsync-bench live-onsets` scores it beside the offline detector on Bench's labelled set.
/// What it misses more often is quiet low hits (kicks, toms, thuds), whose few hundred hertz the
/// offline detector reads over frames reaching 30 ms past their start.
///
/// Deterministic: the same samples give the same onsets whatever the chunk sizes. One thread
/// calls `process` at a time (the class is not `Sendable`).
public final class StreamingOnsetDetector {
    /// Samples a second of the stream.
    public let sampleRate: Double
    /// 0 (only the clearest onsets) to 1 (every small one), as `OnsetDetector.sensitivity`.
    public let sensitivity: Double
    /// Least time between two onsets, seconds.
    public let minimumGap: Double
    /// The most an onset is reported after its first sample: the `process` call that reports an
    /// onset at frame `f` holds frame `f + lookAhead.frames` or an earlier one. 15 ms (720 frames
    /// at 48 kHz).
    public let lookAhead: (seconds: Double, frames: Int)
    /// Samples between analysis frames: 5 ms.
    public let hop: Int
    /// The sample rates a detector is made for, Hz.
    public static let sampleRates = 8_000.0...192_000.0
    /// The channel counts `process` takes.
    public static let channelCounts = 1...8
    /// The index the next frame read will have: frames read so far, counted from the first
    /// frame's index (0, or the `firstFrame` given).
    public var nextFrame: Int64 { Int64(framesRead) + frameOrigin }
    /// Samples that were NaN or infinite, read as 0.
    public private(set) var nonFiniteSamples = 0

    // Fixed at init.
    private let size: Int, lowSize: Int, decimation: Int
    private let spectrum: Spectrum, lowSpectrum: Spectrum
    /// Bin ranges of the low bands (in `lowSpectrum`) then of the frame's bands (in `spectrum`).
    private let bandRanges: [Range<Int>]
    private let lowBandCount: Int, bandCount: Int
    private let bandWeights: [Float], gateCeilings: [Float]
    private let decimationKernel: [Float]
    private let lowDelay: Int
    private let lowBin: Int, highBin: Int
    private let binHz: Double
    /// The rise's frames: after (the newest), the lag between, the base before (`riseSeconds`).
    private let afterFrames: Int, lagFrames: Int, baseFrames: Int
    /// Decimated samples the low frame reaches past the newest one (read as silence).
    private let lowLead: Int
    private let rippleLag: Int, gateFrames: Int, shortGateValues: Int, thresholdFrames: Int, peakReach: Int
    private let bandGate: Float, delta: Float, fluxFloor: Float
    private let gapFrames: Int
    private let refineStep: Int, refineSteps: Int
    private let peakFall: Double, referenceFallPerHop: Double, peakFloor: Double
    private let dcPole: Double
    private let felt: (b0: Double, b1: Double, b2: Double, a1: Double, a2: Double), feltHighPass: Double

    // Buffers, allocated at init.
    private let history: UnsafeMutableBufferPointer<Float>
    private let historyMask: Int
    private let low: UnsafeMutableBufferPointer<Float>
    private let lowMask: Int
    private let bandRaw: UnsafeMutableBufferPointer<Float>
    private let rawDepth: Int
    private let ripple: UnsafeMutableBufferPointer<Float>
    private let gates: UnsafeMutableBufferPointer<Float>, before: UnsafeMutableBufferPointer<Float>
    private let flux: UnsafeMutableBufferPointer<Float>
    private let hopFelt: UnsafeMutableBufferPointer<Double>, hopLevel: UnsafeMutableBufferPointer<Double>
    private let hopDepth: Int
    private let plainSteps: UnsafeMutableBufferPointer<Double>, differencedSteps: UnsafeMutableBufferPointer<Double>
    private var frame: [Float], magnitudes: [Float], real: [Float], imaginary: [Float]
    private var lowFrame: [Float], lowMagnitudes: [Float], lowReal: [Float], lowImaginary: [Float]
    private let gateScratch: UnsafeMutableBufferPointer<Float>, thresholdScratch: UnsafeMutableBufferPointer<Float>

    // State.
    /// Frames read since the start or `reset`.
    private var framesRead = 0
    /// What turns a count of frames read into an input frame index: `firstFrame` − frames read.
    private var frameOrigin: Int64 = 0
    /// Decimated samples made so far.
    private var lowCount = 0
    /// The DC blocker's last input and output.
    private var dcIn = 0.0, dcOut = 0.0
    /// The felt-loudness filters' state: the low-pass's last inputs and outputs, the high-pass's.
    private var feltState = (x1: 0.0, x2: 0.0, y1: 0.0, y2: 0.0, hp: 0.0, hpIn: 0.0)
    /// Sums of squares over the hop so far, felt and unweighted.
    private var hopFeltSum = 0.0, hopLevelSum = 0.0
    /// The running references: the sample peak (linear), felt and unweighted 5 ms levels (dBFS).
    private var peakReference = 0.0, feltReference = -40.0, levelReference = -60.0
    /// The newest frame's spectral centroid, Hz.
    private var centroid = 0.0
    /// A candidate waiting for its flux to stop rising: the peak so far and its strength.
    private var pending = false, pendingFlux: Float = 0, pendingStrength = 0.0
    /// Whether a candidate may start: false after a decision cut short, until the flux falls.
    private var armed = true
    /// The last frame's flux.
    private var previousFlux: Float = 0
    /// The frame (count of frames read) of the last onset reported.
    private var lastOnset = Int.min

    /// The look-ahead, seconds: 15 ms.
    private static let lookAheadSeconds = 0.015
    /// The rise's spans, seconds: the mean level over the newest 15 ms of frames against the mean
    /// over 20 ms of frames ending 5 ms before those.
    private static let riseSeconds = (after: 0.015, lag: 0.005, base: 0.02)
    /// The spans a band's gate is estimated over, seconds back: the larger of the two gates.
    private static let gateSeconds = (long: 0.25, short: 0.15)
    /// The running references' floors, dB full scale: a stream quieter than this throughout is
    /// measured against it, not scaled up (the peak and level −60, felt loudness −40: a whisper
    /// stays a whisper).
    private static let levelFloor = -60.0, feltFloor = -40.0
    /// The least band level (log units) a frame's band has sound at: the ripple of frames below it
    /// is left out of the gates (about 100 dB below the running peak: digital silence, or a DC
    /// blocker's tail).
    private static let soundLevel: Float = 0.01
    /// How fast the running references fall, dB a second.
    private static let referenceFall = 1.0
    /// The most a sample counts for, either way (80 dB past full scale: keeps every sum finite).
    private static let sampleLimit: Float = 10_000

    // MARK: - Control side

    /// A detector for a stream at `sampleRate` Hz (within `sampleRates`), `sensitivity` 0...1 and
    /// `minimumGap` seconds as `OnsetDetector`'s. Allocates every buffer `process` uses.
    public init(sampleRate: Double, sensitivity: Double = 0.5, minimumGap: Double = 0.03) {
        precondition(Self.sampleRates.contains(sampleRate), "a sample rate from 8 to 192 kHz, not \(sampleRate)")
        self.sampleRate = sampleRate
        self.sensitivity = min(max(sensitivity, 0), 1)
        self.minimumGap = max(minimumGap, 0)
        let analysis = FrameAnalysis(sampleRate: sampleRate)
        size = analysis.size
        hop = analysis.hop
        let hopSeconds = Double(hop) / sampleRate
        spectrum = Spectrum(size: size)
        binHz = sampleRate / Double(size)
        let layout = Self.bandLayout(sampleRate: sampleRate, size: size)
        lowBin = layout.lowBin
        highBin = layout.highBin
        decimation = layout.decimation
        lowSize = layout.lowSize
        lowSpectrum = Spectrum(size: lowSize)
        lowLead = lowSize / 8
        let ranges = layout.lowBands + layout.bands
        bandRanges = ranges
        lowBandCount = layout.lowBands.count
        bandCount = ranges.count
        bandWeights = ranges.map { Float(min(1, (Double($0.count) / 16).squareRoot())) }
        gateCeilings = ranges.map { OnsetDetector.noiseRippleCeiling / Float(max($0.count, 1)).squareRoot() }
        decimationKernel = layout.kernel
        // The decimated sample k is centred on input sample k·decimation; it is complete once the
        // kernel's last tap is in.
        lowDelay = (layout.kernel.count - 1) - (layout.kernel.count - 1) / 2

        let frames = { (seconds: Double) in max(1, Int((seconds / hopSeconds).rounded())) }
        rippleLag = frames(0.02)
        gateFrames = frames(Self.gateSeconds.long)
        shortGateValues = max(1, frames(Self.gateSeconds.short) / 2)
        thresholdFrames = frames(0.25)
        afterFrames = frames(Self.riseSeconds.after)
        lagFrames = frames(Self.riseSeconds.lag)
        baseFrames = frames(Self.riseSeconds.base)
        peakReach = frames(0.03)
        let detector = OnsetDetector(sampleRate: sampleRate, sensitivity: self.sensitivity, minimumGap: self.minimumGap)
        bandGate = detector.bandGate
        let s = self.sensitivity
        delta = Float(s <= 0.5 ? 5 - 4 * s : 3 - 3 * (s - 0.5))
        fluxFloor = Float(0.3 * (1.5 - s))
        gapFrames = Int((self.minimumGap * sampleRate).rounded())
        let lookAheadFrames = Int((Self.lookAheadSeconds * sampleRate).rounded())
        lookAhead = (Double(lookAheadFrames) / sampleRate, lookAheadFrames)
        refineStep = max(1, Int(sampleRate / 1000))
        refineSteps = (lookAheadFrames + refineStep - 1) / refineStep + 2 + 15
        peakFall = pow(10, -Self.referenceFall / 20 / sampleRate)
        referenceFallPerHop = Self.referenceFall * hopSeconds
        peakFloor = pow(10, Self.levelFloor / 20)
        dcPole = 1 - 2 * Double.pi * 10 / sampleRate
        // FrameAnalysis.feltWeight in the time domain: its 1 / (1 + (f/250)^4) is a second-order
        // Butterworth low-pass at 250 Hz (bilinear; RBJ's cookbook, Q 1/√2), its fall below 30 Hz
        // about a one-pole high-pass there.
        let w = 2 * Double.pi * 250 / sampleRate, alpha = sin(w) / (2 * 0.5.squareRoot()), c = cos(w)
        let a0 = 1 + alpha
        felt = ((1 - c) / 2 / a0, (1 - c) / a0, (1 - c) / 2 / a0, -2 * c / a0, (1 - alpha) / a0)
        feltHighPass = 1 - 2 * Double.pi * 30 / sampleRate

        func buffer<T: Numeric>(_ count: Int, of: T.Type) -> UnsafeMutableBufferPointer<T> {
            let b = UnsafeMutableBufferPointer<T>.allocate(capacity: count)
            b.initialize(repeating: 0)
            return b
        }
        func powerOfTwo(atLeast n: Int) -> Int {
            var p = 1
            while p < n { p *= 2 }
            return p
        }
        let historyLength = powerOfTwo(atLeast: max(size, refineSteps * refineStep + 1, layout.kernel.count) + 1)
        history = buffer(historyLength, of: Float.self)
        historyMask = historyLength - 1
        let lowLength = powerOfTwo(atLeast: lowSize + 1)
        low = buffer(lowLength, of: Float.self)
        lowMask = lowLength - 1
        rawDepth = powerOfTwo(atLeast: max(afterFrames + lagFrames + baseFrames, 2 * rippleLag + 1))
        bandRaw = buffer(bandCount * rawDepth, of: Float.self)
        ripple = buffer(bandCount * gateFrames, of: Float.self)
        gates = buffer(bandCount, of: Float.self)
        before = buffer(bandCount, of: Float.self)
        flux = buffer(thresholdFrames + peakReach + 1, of: Float.self)
        hopDepth = powerOfTwo(atLeast: lookAheadFrames / hop + 3)
        hopFelt = buffer(hopDepth, of: Double.self)
        hopLevel = buffer(hopDepth, of: Double.self)
        plainSteps = buffer(refineSteps, of: Double.self)
        differencedSteps = buffer(refineSteps, of: Double.self)
        frame = [Float](repeating: 0, count: size)
        magnitudes = [Float](repeating: 0, count: spectrum.bins)
        // Each its own storage (a copy would share it until the first write, which would copy).
        real = [Float](repeating: 0, count: size / 2)
        imaginary = [Float](repeating: 0, count: size / 2)
        lowFrame = [Float](repeating: 0, count: lowSize)
        lowMagnitudes = [Float](repeating: 0, count: lowSpectrum.bins)
        lowReal = [Float](repeating: 0, count: lowSize / 2)
        lowImaginary = [Float](repeating: 0, count: lowSize / 2)
        gateScratch = buffer(gateFrames, of: Float.self)
        thresholdScratch = buffer(thresholdFrames, of: Float.self)
        reset()
    }

    deinit {
        for b in [history, low, bandRaw, ripple, gates, before, flux, gateScratch, thresholdScratch] { b.deallocate() }
        for b in [hopFelt, hopLevel, plainSteps, differencedSteps] { b.deallocate() }
    }

    /// Forgets the stream: the next frame `process` is given is frame 0 again, after silence.
    /// Does not allocate.
    public func reset() {
        history.update(repeating: 0)
        low.update(repeating: 0)
        bandRaw.update(repeating: 0)
        ripple.update(repeating: .nan)
        gates.update(repeating: 0)
        before.update(repeating: 0)
        flux.update(repeating: 0)
        hopFelt.update(repeating: 0)
        hopLevel.update(repeating: 0)
        plainSteps.update(repeating: 0)
        differencedSteps.update(repeating: 0)
        framesRead = 0
        frameOrigin = 0
        nonFiniteSamples = 0
        lowCount = 0
        dcIn = 0
        dcOut = 0
        feltState = (0, 0, 0, 0, 0, 0)
        hopFeltSum = 0
        hopLevelSum = 0
        peakReference = 0
        feltReference = Self.feltFloor
        levelReference = Self.levelFloor
        centroid = 0
        pending = false
        pendingFlux = 0
        pendingStrength = 0
        armed = true
        previousFlux = 0
        lastOnset = Int.min
    }

    /// The band layout `FrameAnalysis` uses (its bands are private to it): third octaves from
    /// 30 Hz to 16 kHz, those below `FrameAnalysis.lowBandsTop` in frames twice as long of the
    /// signal decimated to 4-8 kHz, at least a bin each; the decimation's CIC kernel.
    private static func bandLayout(sampleRate: Double, size: Int)
        -> (bands: [Range<Int>], lowBands: [Range<Int>], lowBin: Int, highBin: Int, decimation: Int, lowSize: Int, kernel: [Float]) {
        let binHz = sampleRate / Double(size)
        let lowBin = max(1, Int((30 / binHz).rounded(.up)))
        let highBin = min(size / 2, Int(16_000 / binHz))
        var edges: [Int] = []
        var f = 30.0
        while f < 16_000 * 1.26 {
            let bin = min(max(Int((f / binHz).rounded()), lowBin), highBin + 1)
            if edges.last.map({ bin > $0 }) ?? true { edges.append(bin) }
            f *= pow(2, 1.0 / 3)
        }
        let bands = zip(edges, edges.dropFirst()).map { $0..<$1 }.filter { Double($0.lowerBound) * binHz >= FrameAnalysis.lowBandsTop * 0.99 }
        var decimation = 1
        while sampleRate / Double(decimation * 2) >= 4_000 { decimation *= 2 }
        let lowSize = max(16, 2 * size / decimation)
        let lowBinHz = sampleRate / Double(decimation) / Double(lowSize)
        let lowTop = bands.first.map { Double($0.lowerBound) * binHz } ?? Double(highBin + 1) * binHz
        var lowEdges: [Int] = []
        f = 30
        while f < lowTop * 1.001 {
            let bin = min(max(1, Int((f / lowBinHz).rounded())), lowSize / 2)
            if lowEdges.last.map({ bin > $0 }) ?? true { lowEdges.append(bin) }
            f *= pow(2, 1.0 / 3)
        }
        let top = min(Int((lowTop / lowBinHz).rounded()), lowSize / 2 + 1)
        if let last = lowEdges.last, top > last { lowEdges.append(top) }
        let boxcar = [Float](repeating: 1 / Float(decimation), count: decimation)
        var kernel: [Float] = [1]
        for _ in 0..<3 {
            var next = [Float](repeating: 0, count: kernel.count + decimation - 1)
            for (i, a) in kernel.enumerated() { for (j, b) in boxcar.enumerated() { next[i + j] += a * b } }
            kernel = next
        }
        return (bands, zip(lowEdges, lowEdges.dropFirst()).map { $0..<$1 }, lowBin, highBin, decimation, lowSize, kernel)
    }

    // MARK: - Real-time side

    /// Reads `samples`, interleaved frames of `channels` channels (within `channelCounts`; the
    /// count a whole number of frames, 0 included), and calls `report` with each onset it
    /// decides, in time order, before it returns (another channel count or a partial frame is a
    /// programming error: it traps). Does not allocate, lock or block, nor retain `report`.
    public func process(_ samples: UnsafeBufferPointer<Float>, channels: Int, report: (StreamingOnset) -> Void) {
        process(samples, channels: channels, report: report, levels: { _ in })
    }

    /// Reads `samples` like `process(_:channels:report:)`, and also calls `levels` with each hop's
    /// felt level as the hop completes. Does not allocate, lock or block, nor retain either.
    public func process(_ samples: UnsafeBufferPointer<Float>, channels: Int, report: (StreamingOnset) -> Void,
                        levels: (StreamingLevel) -> Void) {
        precondition(Self.channelCounts.contains(channels) && samples.count % channels == 0,
                     "interleaved frames of 1 to 8 channels: \(samples.count) samples of \(channels) channels")
        guard let base = samples.baseAddress else { return }
        let frames = samples.count / channels
        let divisor = Double(channels)
        let limit = Self.sampleLimit
        for f in 0..<frames {
            var sum = 0.0
            let first = base + f * channels
            for c in 0..<channels {
                let v = first[c]
                if v.isFinite { sum += Double(min(max(v, -limit), limit)) } else { nonFiniteSamples += 1 }
            }
            // The mean in Double: up to 8 times one float sums exactly there, so the same signal
            // in every channel gives that signal itself.
            read(channels == 1 ? sum : sum / divisor, report: report, levels: levels)
        }
    }

    /// Reads `samples` like `process(_:channels:report:)`, its first frame numbered `firstFrame`:
    /// onsets are reported in the caller's numbering (a capture's frame counter). A `firstFrame`
    /// that does not follow the last chunk's frames (frames lost or repeated) renumbers from
    /// here on; the audio is read as if it were continuous. Does not allocate, lock or block.
    public func process(_ samples: UnsafeBufferPointer<Float>, channels: Int, firstFrame: Int64, report: (StreamingOnset) -> Void,
                        levels: (StreamingLevel) -> Void = { _ in }) {
        frameOrigin = firstFrame - Int64(framesRead)
        process(samples, channels: channels, report: report, levels: levels)
    }

    /// Reads `samples` like `process(_:channels:report:)` and appends the onsets it decides to
    /// `onsets`. Does not lock or block; it allocates only when `onsets` runs out of capacity
    /// (reserve some first on a real-time thread).
    public func process(_ samples: UnsafeBufferPointer<Float>, channels: Int, into onsets: inout [StreamingOnset]) {
        process(samples, channels: channels) { onsets.append($0) }
    }

    /// One mono sample in: the DC blocker, the rings, the running measures; a frame every hop.
    @inline(__always)
    private func read(_ x: Double, report: (StreamingOnset) -> Void, levels: (StreamingLevel) -> Void) {
        let n = framesRead
        if n == 0 { dcIn = x }
        dcOut = x - dcIn + dcPole * dcOut
        dcIn = x
        let y = Float(dcOut)
        history[n & historyMask] = y
        let v = Double(y)
        // Felt: the low-pass, then the high-pass.
        let s = feltState
        let lp = felt.b0 * v + felt.b1 * s.x1 + felt.b2 * s.x2 - felt.a1 * s.y1 - felt.a2 * s.y2
        let hp = feltHighPass * (s.hp + lp - s.hpIn)
        feltState = (v, s.x1, lp, s.y1, hp, lp)
        hopFeltSum += hp * hp
        hopLevelSum += v * v
        peakReference = max(abs(v), peakReference * peakFall)
        framesRead = n + 1
        if decimation > 1, n >= lowDelay, (n - lowDelay) % decimation == 0 { decimate() }
        if framesRead % hop == 0 { analyze(report: report, levels: levels) }
    }

    /// The next decimated sample, `decimationKernel` centred on input sample `lowCount · decimation`.
    @inline(__always)
    private func decimate() {
        let centre = lowCount * decimation
        let reach = (decimationKernel.count - 1) / 2
        var sum: Float = 0
        decimationKernel.withUnsafeBufferPointer { h in
            for j in 0..<h.count {
                let i = centre + j - reach
                if i >= 0 { sum += h[j] * history[i & historyMask] }
            }
        }
        low[lowCount & lowMask] = sum
        lowCount += 1
    }

    /// The frame ending at `framesRead`: its band levels, rises, gates and flux, the threshold, the
    /// peak pick, and a report when one is due.
    private func analyze(report: (StreamingOnset) -> Void, levels: (StreamingLevel) -> Void) {
        let end = framesRead
        let k = end / hop
        spectra(end: end)
        // Band sums into the ring, centroid and the running measures.
        let slot = k & (rawDepth - 1)
        let lowScale = Float(size) / Float(lowSize)
        for b in 0..<bandCount {
            let range = bandRanges[b]
            var sum: Float = 0
            if b < lowBandCount {
                for i in range { sum += lowMagnitudes[i] }
                sum *= lowScale
            } else {
                for i in range { sum += magnitudes[i] }
            }
            bandRaw[b * rawDepth + slot] = sum / Float(range.count)
        }
        var moment = 0.0, total = 0.0
        for i in lowBin...highBin {
            let m = Double(magnitudes[i])
            moment += m * Double(i) * binHz
            total += m
        }
        centroid = total > 1e-9 ? moment / total : 0
        let hopSlot = k & (hopDepth - 1)
        hopFelt[hopSlot] = Self.decibels(hopFeltSum / Double(hop))
        hopLevel[hopSlot] = Self.decibels(hopLevelSum / Double(hop))
        hopFeltSum = 0
        hopLevelSum = 0
        feltReference = max(hopFelt[hopSlot], feltReference - referenceFallPerHop, Self.feltFloor)
        levelReference = max(hopLevel[hopSlot], levelReference - referenceFallPerHop, Self.levelFloor)
        levels(StreamingLevel(frame: Int64(end - hop / 2) + frameOrigin, loudness: LevelFollower.relative(db: hopFelt[hopSlot], loudest: feltReference),
                              centroid: centroid))

        let v = bandFlux(frame: k)
        let (threshold, base) = threshold(frame: k, flux: v)
        var pastMax: Float = 0
        for j in 1...peakReach { pastMax = max(pastMax, flux[(k - j + flux.count) % flux.count]) }
        if !armed, v < previousFlux { armed = true }
        if pending {
            if v > pendingFlux {
                pendingFlux = v
                pendingStrength = Double(v) / Double(max(base, fluxFloor))
            } else {
                emit(end: end, cutShort: false, report: report)
            }
        } else if armed, v > threshold, v >= pastMax {
            pending = true
            pendingFlux = v
            pendingStrength = Double(v) / Double(max(base, fluxFloor))
        }
        previousFlux = v
        if pending, end - 1 + hop - refine(end: end) > lookAhead.frames { emit(end: end, cutShort: true, report: report) }
    }

    /// The frame and the low frame ending at `end` through their spectra.
    private func spectra(end: Int) {
        frame.withUnsafeMutableBufferPointer { f in
            for i in 0..<size {
                let n = end - size + i
                f[i] = n >= 0 ? history[n & historyMask] : 0
            }
        }
        spectrum.magnitudes(frame, start: 0, into: &magnitudes, real: &real, imaginary: &imaginary)
        guard lowBandCount > 0 else { return }
        if decimation == 1 {
            lowFrame.withUnsafeMutableBufferPointer { f in
                for i in 0..<lowSize {
                    let n = end + lowLead - lowSize + i
                    f[i] = n >= 0 && n < end ? history[n & historyMask] : 0
                }
            }
        } else {
            lowFrame.withUnsafeMutableBufferPointer { f in
                for i in 0..<lowSize {
                    let n = lowCount + lowLead - lowSize + i
                    f[i] = n >= 0 && n < lowCount ? low[n & lowMask] : 0
                }
            }
        }
        lowSpectrum.magnitudes(lowFrame, start: 0, into: &lowMagnitudes, real: &lowReal, imaginary: &lowImaginary)
    }

    /// The flux of frame `k`: per band the rise of its mean level over the newest `afterFrames`
    /// over the largest of its own and its neighbours' means over `baseFrames` ending `lagFrames`
    /// before them, less its gate (estimated here from its past ripple), weighted and summed.
    private func bandFlux(frame k: Int) -> Float {
        let mask = rawDepth - 1
        let gain = Float(100 / max(peakReference, peakFloor))
        func level(_ b: Int, _ back: Int) -> Float { log1pf(gain * bandRaw[b * rawDepth + ((k - back) & mask)]) }
        for b in 0..<bandCount {
            var sum: Float = 0
            for j in 0..<baseFrames { sum += level(b, afterFrames - 1 + lagFrames + j) }
            before[b] = sum / Float(baseFrames)
        }
        var total: Float = 0
        let slot = k % gateFrames
        for b in 0..<bandCount {
            var after: Float = 0
            for j in 0..<afterFrames { after += level(b, j) }
            after /= Float(afterFrames)
            var past = before[b]
            if b > 0 { past = max(past, before[b - 1]) }
            if b + 1 < bandCount { past = max(past, before[b + 1]) }
            // The ripple of frames of sound only: a band silent in any of the three says nothing
            // of the noise of the sound that follows (and would hold its gate at 0 after silence).
            let l0 = level(b, 0), l1 = level(b, rippleLag), l2 = level(b, 2 * rippleLag)
            let d = l0 - 2 * l1 + l2
            ripple[b * gateFrames + slot] = min(l0, l1, l2) >= Self.soundLevel && d.isFinite ? d : .nan
            if k % 2 == 0 { gates[b] = gate(band: b, frame: k) }
            let rise = after - past
            if rise.isFinite, rise > gates[b] { total += (rise - gates[b]) * bandWeights[b] }
        }
        return total
    }

    /// Band `b`'s gate: `bandGate` × the scaled MAD of its ripple over the last `gateFrames`
    /// (every other frame, as `OnsetDetector` takes them) ÷ √6, at most its ceiling.
    private func gate(band b: Int, frame k: Int) -> Float {
        var spread = spread(band: b, frame: k, values: (gateFrames + 1) / 2)
        spread = max(spread, self.spread(band: b, frame: k, values: shortGateValues))
        return bandGate * min(spread, gateCeilings[b])
    }

    private func spread(band b: Int, frame k: Int, values count: Int) -> Float {
        var n = 0
        for i in 0..<count {
            let d = ripple[b * gateFrames + (k - 2 * i + 2 * gateFrames) % gateFrames]
            if !d.isNaN {
                gateScratch[n] = d
                n += 1
            }
        }
        guard n > 0 else { return 0 }
        let values = UnsafeMutableBufferPointer(rebasing: gateScratch[0..<n])
        let middle = values.count / 2
        let median = Self.select(values, middle)
        for i in values.indices { values[i] = abs(values[i] - median) }
        return 1.4826 * Self.select(values, middle) / Float(6).squareRoot()
    }

    /// Stores frame `k`'s flux and gives the threshold over the last `thresholdFrames` (this one
    /// included), and its base `median + δ · 1.4826 · MAD`.
    private func threshold(frame k: Int, flux v: Float) -> (threshold: Float, base: Float) {
        let count = flux.count
        flux[k % count] = v
        let values = thresholdScratch
        for i in 0..<thresholdFrames { values[i] = flux[(k - i + count) % count] }
        let middle = thresholdFrames / 2
        let median = Self.select(values, middle)
        for i in 0..<thresholdFrames { values[i] = abs(values[i] - median) }
        let base = median + delta * 1.4826 * Self.select(values, middle)
        return (max(base, 1.5 * median, fluxFloor), base)
    }

    /// Reports the pending candidate, decided at the frame ending at `end`, unless the minimum gap
    /// or the quiet floor drops it.
    private func emit(end: Int, cutShort: Bool, report: (StreamingOnset) -> Void) {
        pending = false
        armed = !cutShort
        let decided = end - 1
        let start = max(refine(end: end), decided - lookAhead.frames, 0)
        guard lastOnset == Int.min || start - lastOnset >= gapFrames else { return }
        // The loudest 5 ms steps from the one holding the start to the newest.
        let k = end / hop
        var level = -120.0, feltLevel = -120.0
        var j = k
        while j > 0, j > k - hopDepth, j * hop > start {
            level = max(level, hopLevel[j & (hopDepth - 1)])
            feltLevel = max(feltLevel, hopFelt[j & (hopDepth - 1)])
            j -= 1
        }
        guard level >= levelReference - OnsetDetector.quietestOnset else { return }
        let loudness = LevelFollower.relative(db: feltLevel, loudest: feltReference)
        lastOnset = start
        report(StreamingOnset(frame: Int64(start) + frameOrigin, decidedAt: Int64(decided) + frameOrigin, strength: pendingStrength,
                              loudness: loudness, centroid: centroid))
    }

    /// Where the sound the pending candidate stands for starts, an input frame: among the 1 ms
    /// steps of the `refineSteps` ending at `end`, as `OnsetDetector` refines.
    private func refine(end: Int) -> Int {
        let step = refineStep
        let origin = end - refineSteps * step
        for i in 0..<refineSteps {
            var e = 0.0, d = 0.0
            let from = origin + i * step
            for n in max(from, 0)..<max(from + step, 0) {
                let x = Double(history[n & historyMask]), previous = n > 0 ? Double(history[(n - 1) & historyMask]) : 0
                e += x * x
                d += (x - previous) * (x - previous)
            }
            plainSteps[i] = e
            differencedSteps[i] = d
        }
        let plain = Self.start(in: plainSteps), differenced = Self.start(in: differencedSteps)
        return origin + (differenced.contrast > plain.contrast ? differenced.step : plain.step) * step
    }

    /// In 1 ms energies whose first 15 are before the span: the step the new sound starts at, and
    /// its contrast (its loudest step over the tail before it); `OnsetDetector`'s rule.
    private static func start(in energies: UnsafeMutableBufferPointer<Double>) -> (step: Int, contrast: Double) {
        func tail(_ i: Int) -> Double {
            var m = 0.0
            for j in max(0, i - 15)...max(0, i - 3) { m = max(m, energies[j]) }
            return m
        }
        var peak = 15, rise = -Double.infinity
        for i in 15..<energies.count where energies[i] - tail(i) > rise {
            rise = energies[i] - tail(i)
            peak = i
        }
        let base = tail(peak)
        let threshold = base + 0.15 * (energies[peak] - base)
        var start = peak
        let limit = max(0, peak - 15)
        while start > limit {
            if energies[start - 1] > threshold { start -= 1 } else if start - 2 >= limit, energies[start - 2] > threshold { start -= 2 } else { break }
        }
        return (start, energies[peak] / (base + 1e-12))
    }

    /// The `k`th smallest of `v` (0-based), reordering them: `OnsetDetector.select`'s Hoare
    /// selection, over a buffer.
    private static func select(_ v: UnsafeMutableBufferPointer<Float>, _ k: Int) -> Float {
        var lo = 0, hi = v.count - 1
        while lo < hi {
            let pivot = v[(lo + hi) / 2]
            var i = lo, j = hi
            while i <= j {
                while v[i] < pivot { i += 1 }
                while v[j] > pivot { j -= 1 }
                if i <= j {
                    v.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            if k <= j { hi = j } else if k >= i { lo = i } else { return v[k] }
        }
        return v[k]
    }

    /// A mean square as dB full scale (a full-scale sine's mean square, 1/2, is 0 dB).
    private static func decibels(_ meanSquare: Double) -> Double { 10 * log10(max(meanSquare * 2, 1e-12)) }
}
