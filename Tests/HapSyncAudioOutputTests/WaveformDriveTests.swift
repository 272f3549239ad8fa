import HapSyncCore
import HapSyncRuntime
import Testing
@testable import HapSyncAudioOutput

/// `WaveformDrive` without a server: commands placed at frames come out exactly there, whatever
/// the blocks the stream asks for; a command whose frame has gone is played at once and counted.
@Suite("Waveform drive")
struct WaveformDriveTests {
    /// Renders `frames` frames in blocks of uneven sizes.
    static func render(_ drive: WaveformDrive, frames: Int) -> [Float] {
        var out = [Float](repeating: 0, count: frames)
        var done = 0, size = 37
        out.withUnsafeMutableBufferPointer { o in
            while done < frames {
                let n = min(size, frames - done)
                drive.render(into: o.baseAddress! + done, frames: n, time: 0)
                done += n
                size = size * 7 % 509 + 1
            }
        }
        return out
    }

    @Test func aLowPassTakesTheEdgeOffABurst() {
        // A sharp tap (the DualSense profile's highest carrier) through a 120 Hz low-pass: far
        // less energy, the same start, and a signal that stays finite.
        func burst(_ lowPass: Double?) -> [Float] {
            let drive = WaveformDrive(channels: .rear, sampleRate: 48_000)
            drive.lowPassHz = lowPass
            drive.reset(sampleRate: 48_000)
            drive.place(.transient, intensity: 1, sharpness: 1, frame: 100)
            return Self.render(drive, frames: 4_800)
        }
        let plain = burst(nil), filtered = burst(120)
        let energy = { (x: [Float]) in x.reduce(0) { $0 + Double($1) * Double($1) } }
        #expect(energy(plain) > 0 && filtered.allSatisfy(\.isFinite))
        #expect(energy(filtered) < 0.5 * energy(plain), "\(energy(filtered)) vs \(energy(plain))")
        #expect(filtered[..<100].allSatisfy { $0 == 0 })
        #expect(burst(30_000) == plain, "a cutoff above Nyquist filters nothing")
    }

    @Test func eachTapStartsAtItsFrameInAnyBlocks() {
        let drive = WaveformDrive(channels: .rear, sampleRate: 48_000)
        let frames: [Int64] = [1_000, 4_321, 9_999, 20_000]
        for f in frames { drive.place(.transient, intensity: 1, sharpness: 0.8, frame: f) }
        let out = Self.render(drive, frames: 24_000)
        for f in frames.map(Int.init) {
            // The burst's first 60 frames match at its frame, and not one frame either side (the
            // previous burst's DC-blocker tail and the limiter's recovery differ by < 1e-3).
            let at = BurstAlignmentShape.difference(out, at: f)
            #expect(at < 1e-3 && BurstAlignmentShape.difference(out, at: f - 1) > 1e-3 && BurstAlignmentShape.difference(out, at: f + 1) > 1e-3,
                    "the burst for frame \(f) starts there (difference \(at))")
        }
        #expect(drive.lateCommands == 0)
    }

    @Test func aCommandWhoseFrameHasGoneIsPlayedAtOnceAndCounted() {
        let drive = WaveformDrive(channels: .rear, sampleRate: 48_000)
        _ = Self.render(drive, frames: 5_000)
        drive.place(.transient, intensity: 1, sharpness: 0.8, frame: 100)
        var out = [Float](repeating: 0, count: 1_000)
        out.withUnsafeMutableBufferPointer { drive.render(into: $0.baseAddress!, frames: 1_000, time: 0) }
        #expect(drive.lateCommands == 1)
        #expect(BurstAlignmentShape.difference(out, at: 0) < 1e-3, "played at the block's start")
    }
}

/// The burst a fresh synthesizer makes for a tap of intensity 1, sharpness 0.8 (as a command
/// carries it, a Float), and how far a signal is from it.
enum BurstAlignmentShape {
    static let burst: [Float] = {
        var synth = WaveformSynth(profile: .dualSense, sampleRate: 48_000)
        synth.trigger(intensity: 1, sharpness: Double(Float(0.8)))
        var out = [Float](repeating: 0, count: 60)
        out.withUnsafeMutableBufferPointer { synth.render(into: $0.baseAddress!, count: 60) }
        return out
    }()

    /// The largest difference between `x` from `start` on and the burst's first 60 frames.
    static func difference(_ x: [Float], at start: Int) -> Float {
        burst.indices.map { abs(x[start + $0] - burst[$0]) }.max()!
    }
}

/// How far ahead of its sound a drive is rendered: a window's least, the greatest so far.
@Suite("render-ahead gauge")
struct RenderAheadGaugeTests {
    @Test func aWindowsLeastCountsAndOneSpikeDoesNot() {
        let gauge = RenderAheadGauge()
        for _ in 0..<RenderAheadGauge.window - 1 { gauge.note(40_000_000) }
        #expect(gauge.value == 0, "nothing until a window is full")
        gauge.note(20_000_000)
        #expect(gauge.value == 20_000_000, "the window's least")
        // One block rendered 500 ms ahead (a glitch) among blocks 20 ms ahead: not taken.
        gauge.note(500_000_000)
        for _ in 0..<RenderAheadGauge.window - 1 { gauge.note(21_000_000) }
        #expect(gauge.value == 21_000_000)
        // Less ahead later (a buffer that shrank back): the value keeps its greatest.
        for _ in 0..<RenderAheadGauge.window { gauge.note(5_000_000) }
        #expect(gauge.value == 21_000_000)
    }

    @Test func aDriveNotesEachBlocksTimeAheadOfItsRender() {
        let gauge = RenderAheadGauge()
        let drive = WaveformDrive(channels: .rear, sampleRate: 48_000, gauge: gauge)
        var out = [Float](repeating: 0, count: 480)
        out.withUnsafeMutableBufferPointer { buffer in
            // Blocks of 10 ms whose first frame is heard 60 ms after they are rendered (their last
            // 70 ms after), then one whose time is not known (0).
            for i in 0..<RenderAheadGauge.window {
                drive.render(into: buffer.baseAddress!, frames: 480, time: 1_060_000_000 + UInt64(i) * 10_000_000,
                             now: 1_000_000_000 + UInt64(i) * 10_000_000)
            }
            drive.render(into: buffer.baseAddress!, frames: 480, time: 0, now: 2_000_000_000)
        }
        #expect(drive.renderAhead == 70_000_000)
    }
}
