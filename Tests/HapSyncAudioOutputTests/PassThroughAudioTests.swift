import Synchronization
import Testing
@testable import HapSyncAudioOutput

/// `PassThroughAudio` without a server: captured frames come out at one fixed distance, whatever
/// the blocks on either side; what is late, missing or overrun is silence and counted.
@Suite("Pass-through audio")
struct PassThroughAudioTests {
    /// A stereo capture whose frame f is (f, -f) (small enough to be exact in a Float).
    static func capture(_ first: Int64, _ frames: Int) -> [Float] {
        (0..<frames).flatMap { i -> [Float] in
            let f = Float(first + Int64(i))
            return [f, -f]
        }
    }

    static func write(_ p: PassThroughAudio, _ first: Int64, _ frames: Int) {
        Self.capture(first, frames).withUnsafeBufferPointer { p.write($0, channels: 2, firstFrame: first) }
    }

    static func mix(_ p: PassThroughAudio, _ first: Int64, _ frames: Int) -> [Float] {
        var out = [Float](repeating: 0, count: 2 * frames)
        out.withUnsafeMutableBufferPointer { p.mix(into: $0.baseAddress!, frames: frames, firstFrame: first) }
        return out
    }

    @Test func theFirstBlockFixesTheDistanceAndEveryFrameKeepsIt() {
        let p = PassThroughAudio(capacityFrames: 4096, hold: 10)
        #expect(p.offset == nil)
        Self.write(p, 0, 100)
        // Output frames 500..<564: the last plays capture frame 99 - 10 = 89.
        let first = Self.mix(p, 500, 64)
        #expect(p.offset == Int64(563 - 89))
        let offset = p.offset!
        for i in 0..<64 {
            let c = Float(500 + Int64(i) - offset)
            #expect(first[2 * i] == c && first[2 * i + 1] == -c)
        }
        // Uneven blocks on both sides: output frame o is capture frame o - offset, always.
        var o: Int64 = 564, c: Int64 = 100, size = 7
        for _ in 0..<200 {
            Self.write(p, c, size)
            c += Int64(size)
            let n = (size * 13) % 40 + 1
            let out = Self.mix(p, o, n)
            for i in 0..<n where o + Int64(i) - offset < c {
                #expect(out[2 * i] == Float(o + Int64(i) - offset))
            }
            o += Int64(n)
            size = size * 5 % 31 + 1
        }
        #expect(p.overwrittenFrames == 0)
    }

    /// Quiet: the newest n frames written all at or under −50 dBFS, and at least n written.
    @Test func quietIsTheNewestFramesUnderMinus50dBFS() {
        let p = PassThroughAudio(capacityFrames: 4096, hold: 10)
        #expect(!p.isQuiet(forFrames: 1), "nothing written yet")
        let soft = [Float](repeating: 0.003, count: 2 * 100)
        soft.withUnsafeBufferPointer { p.write($0, channels: 2, firstFrame: 0) }
        #expect(p.isQuiet(forFrames: 100) && !p.isQuiet(forFrames: 101), "100 soft frames: quiet over 100, not known over more")
        // One loud sample on the right channel at frame 150 (of 100-199).
        var loud = [Float](repeating: 0, count: 2 * 100)
        loud[2 * 50 + 1] = -0.01
        loud.withUnsafeBufferPointer { p.write($0, channels: 2, firstFrame: 100) }
        #expect(p.isQuiet(forFrames: 49) && !p.isQuiet(forFrames: 50), "quiet since frame 151 only")
        let silence = [Float](repeating: 0, count: 2 * 100)
        silence.withUnsafeBufferPointer { p.write($0, channels: 2, firstFrame: 200) }
        #expect(p.isQuiet(forFrames: 149) && !p.isQuiet(forFrames: 150))
        // A non-finite sample is written as 0: quiet.
        let infinite = [Float](repeating: .infinity, count: 2 * 10)
        infinite.withUnsafeBufferPointer { p.write($0, channels: 2, firstFrame: 300) }
        #expect(p.isQuiet(forFrames: 159))
    }

    @Test func framesNotYetCapturedAreSilenceAndCountedLate() {
        let p = PassThroughAudio(capacityFrames: 4096, hold: 0)
        Self.write(p, 0, 10)
        _ = Self.mix(p, 0, 10)            // fixes offset 0: output 9 plays capture 9
        #expect(p.offset == Int64(0))
        let out = Self.mix(p, 10, 20)     // capture 10..<30 not there yet
        #expect(out.allSatisfy { $0 == 0 })
        #expect(p.lateFrames == 20 && p.lateBlocks == 1)
        // They arrive after their turn: dropped, the distance holds.
        Self.write(p, 10, 40)
        let next = Self.mix(p, 30, 10)
        #expect(next[0] == 30 && next[18] == 39)
        #expect(p.lateFrames == 20)
    }

    @Test func aHoleInTheCaptureIsSilence() {
        let p = PassThroughAudio(capacityFrames: 4096, hold: 0)
        Self.write(p, 0, 10)
        _ = Self.mix(p, 0, 10)
        Self.write(p, 20, 10)             // frames 10..<20 never came
        let out = Self.mix(p, 10, 20)
        #expect(out[0..<20].allSatisfy { $0 == 0 })
        #expect(out[20] == 20 && out[38] == 29)
        #expect(p.lateFrames == 0)
    }

    @Test func monoPlaysOnBothChannelsAndNonFiniteSamplesAreSilence() {
        let p = PassThroughAudio(capacityFrames: 1024, hold: 0)
        let mono: [Float] = [0.5, .nan, .infinity, -0.25]
        mono.withUnsafeBufferPointer { p.write($0, channels: 1, firstFrame: 0) }
        let out = Self.mix(p, 0, 4)
        #expect(out == [0.5, 0.5, 0, 0, 0, 0, -0.25, -0.25])
    }

    @Test func moreChannelsGiveTheFirstTwo() {
        let p = PassThroughAudio(capacityFrames: 1024, hold: 0)
        let six: [Float] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
        six.withUnsafeBufferPointer { p.write($0, channels: 6, firstFrame: 0) }
        #expect(Self.mix(p, 0, 2) == [1, 2, 7, 8])
    }

    @Test func aCaptureRunningAWholeRingAheadIsCountedNotPlayedWrong() {
        let p = PassThroughAudio(capacityFrames: 1024, hold: 0)
        Self.write(p, 0, 10)
        _ = Self.mix(p, 0, 10)
        Self.write(p, 10, 3000)           // more than the ring holds
        let out = Self.mix(p, 10, 100)
        #expect(out.allSatisfy { $0 == 0 })
        #expect(p.overwrittenFrames == 100)
        // What the ring still holds plays at its place.
        let late = Self.mix(p, 2500, 4)
        #expect(late[0] == 2500)
    }

    @Test func unfixLetsTheNextBlockFixItAgain() {
        let p = PassThroughAudio(capacityFrames: 1024, hold: 4)
        Self.write(p, 0, 50)
        #expect(p.fixInForce == nil)
        _ = Self.mix(p, 100, 10)
        #expect(p.offset == Int64(109 - 45))
        // The first fix's first block (output 100) played capture 36; nothing was rendered before.
        #expect(p.fixInForce == PassThroughAudio.Fix(number: 1, offset: 64, firstPlayed: 36, renderedBefore: .min))
        p.unfix()
        #expect(p.offset == nil && p.fixInForce == nil)
        Self.write(p, 50, 50)
        _ = Self.mix(p, 0, 10)
        #expect(p.offset == Int64(9 - 95))
        // The second fix jumped ahead: its first block played capture 86, so 46..<86, not yet
        // played at the first distance, are never played; output frames before 110 went out at
        // the first.
        #expect(p.fixInForce == PassThroughAudio.Fix(number: 2, offset: -86, firstPlayed: 86, renderedBefore: 110))
        // Blocks at a fixed distance keep the fix.
        _ = Self.mix(p, 10, 10)
        #expect(p.fixInForce?.number == 2)
    }

    /// Dormant, it plays nothing; turned on again (serve's second `/hapsync/live 1`), a capture
    /// that continues the numbering fixes the distance anew and nothing of the last capture plays.
    @Test func aDormantPassThroughPlaysNothingAndALaterCaptureNothingOfTheLast() {
        let p = PassThroughAudio(capacityFrames: 4096, hold: 0, active: false)
        #expect(!p.isActive)
        Self.write(p, 0, 100)
        #expect(Self.mix(p, 0, 64).allSatisfy { $0 == 0 } && p.offset == nil && p.lateFrames == 0)
        p.activate(hold: 50)
        #expect(p.isActive && p.hold == 50)
        // Nothing new captured since: no distance, silence.
        #expect(Self.mix(p, 64, 64).allSatisfy { $0 == 0 } && p.offset == nil)
        Self.write(p, 100, 20)
        // The block's last frame plays capture 119 - 50 = 69, from before this capture: silence.
        let out = Self.mix(p, 128, 64)
        #expect(p.offset == Int64(191 - 69))
        #expect(out.allSatisfy { $0 == 0 }, "\(out)")
        #expect(p.lateFrames == 0)
        // From frame 100 on, the new capture plays at the new distance.
        Self.write(p, 120, 100)
        let next = Self.mix(p, 192, 64)
        for i in 0..<64 {
            let c = 192 + Int64(i) - p.offset!
            #expect(next[2 * i] == (c >= 100 ? Float(c) : 0), "output \(192 + i) plays capture \(c)")
        }
        p.deactivate()
        #expect(Self.mix(p, 256, 64).allSatisfy { $0 == 0 } && p.offset == nil)
    }

    /// `hapsync live` growing its capture's fragment: activated anew, with a longer hold, between
    /// one capture and the next (numbered on) while it plays. What the old capture had not played
    /// yet is skipped: no capture frame plays twice, none from before the new capture after the
    /// switch, and the new capture plays in order at the new distance.
    @Test func activatedAnewBetweenCapturesItSkipsAndNeverReplays() {
        let p = PassThroughAudio(capacityFrames: 4096, hold: 10)
        var heard: [Float] = []
        func play(_ first: Int64, _ frames: Int) -> [Float] {
            let out = Self.mix(p, first, frames)
            let left = stride(from: 0, to: out.count, by: 2).map { out[$0] }
            heard += left.filter { $0 != 0 }
            return left
        }
        Self.write(p, 0, 100)
        _ = play(500, 64)                 // output 563 plays capture 89
        p.activate(hold: 30)
        #expect(p.firstPlayableFrame == 100)
        #expect(play(564, 64).allSatisfy { $0 == 0 }, "nothing new captured yet: silence")
        Self.write(p, 100, 20)
        // The block's last frame plays capture 119 - 30 = 89: 90..<100 (the old tail) are skipped.
        let switched = play(628, 64)
        #expect(p.offset == Int64(691 - 89))
        // Activate is followed by a fix of its own; the blocks while no distance was in force
        // (564..<628) rendered nothing of the capture.
        #expect(p.fixInForce.map { [$0.number, Int($0.renderedBefore)] } == [2, 564])
        #expect(switched.allSatisfy { $0 == 0 }, "\(switched)")
        Self.write(p, 120, 200)
        let next = play(692, 128)
        for (i, v) in next.enumerated() {
            let c = 692 + Int64(i) - p.offset!
            #expect(v == (c >= 100 ? Float(c) : 0), "output \(692 + i) plays capture \(c)")
        }
        #expect(Set(heard).count == heard.count, "a capture frame played twice")
        #expect(!heard.contains { (90..<100).contains($0) }, "the old capture's unplayed tail played after the switch")
    }

    @Test func nothingIsFixedBeforeTheFirstCapture() {
        let p = PassThroughAudio(capacityFrames: 1024, hold: 4)
        let out = Self.mix(p, 0, 64)
        #expect(out.allSatisfy { $0 == 0 } && p.offset == nil && p.lateFrames == 0)
    }

    /// A capture thread and an audio thread at once, the capture running ahead of a small ring
    /// now and then: every frame the reader plays is either the capture frame its distance names
    /// or silence, and a frame it could not be sure of is counted, never played wrong unsaid.
    @Test func aWriterAndAReaderAtOnceNeverPlayAWrongFrameUnsaid() async {
        // One frame for one frame, so that each frame's value says whether it is the right one
        // (the writer's pace is nothing like a clock's: the rate would lean all the time).
        let p = PassThroughAudio(capacityFrames: 1024, hold: 64, followsDrift: false)
        let done = Atomic<Bool>(false)
        let writer = Task.detached {
            var c: Int64 = 0, size = 17, turn = 0
            var chunk = [Float](repeating: 0, count: 2 * 600)
            while !done.load(ordering: .relaxed) {
                turn += 1
                // Mostly a ring's worth ahead of what was played at most; now and then further.
                let played = p.playedFrames == .min ? 0 : p.playedFrames
                if turn % 50 != 0, c - played > 400 {
                    await Task.yield()
                    continue
                }
                for i in 0..<size {
                    chunk[2 * i] = Float(c + Int64(i) + 1)
                    chunk[2 * i + 1] = -Float(c + Int64(i) + 1)
                }
                chunk.withUnsafeBufferPointer { p.write(UnsafeBufferPointer(rebasing: $0[0..<(2 * size)]), channels: 2, firstFrame: c) }
                c += Int64(size)
                size = size * 7 % 599 + 1
            }
        }
        var o: Int64 = 0, wrong = 0, right = 0, unsaid = 0
        var out = [Float](repeating: 0, count: 2 * 512)
        for block in 0..<20_000 {
            let n = Int(o % 509) + 1
            // Mostly waiting (a while) for the frames the block plays; now and then not at all.
            if let offset = p.offset, block % 50 != 0 {
                var waits = 0
                while p.capturedFrames < o + Int64(n) - offset, waits < 200 {
                    await Task.yield()
                    waits += 1
                }
            }
            let before = p.overwrittenFrames
            out.withUnsafeMutableBufferPointer { b in
                b.update(repeating: 0)
                p.mix(into: b.baseAddress!, frames: n, firstFrame: o)
            }
            if let offset = p.offset {
                var wrongHere = 0
                for i in 0..<n where out[2 * i] != 0 {
                    if out[2 * i] == Float(o + Int64(i) - offset + 1) { right += 1 } else { wrongHere += 1 }
                }
                // A frame played wrong in this block is one this block counted.
                if wrongHere > p.overwrittenFrames - before { unsaid += wrongHere }
                wrong += wrongHere
            }
            o += Int64(n)
            if o % 3 == 0 { await Task.yield() }
        }
        done.store(true, ordering: .relaxed)
        await writer.value
        // Frames played wrong are at most those counted as possibly torn; most play right.
        #expect(unsaid == 0, "\(unsaid) frames played wrong in blocks that did not count them")
        #expect(right > 0, "no frame played at its place")
        print("pass-through under a racing writer: \(right) frames right, \(wrong) wrong, \(p.overwrittenFrames) counted as overrun, \(p.lateFrames) late")
    }

    /// Two clocks `ppm` apart, simulated for `seconds`: the capture arrives in `fragment`-frame
    /// pieces at 48 kHz by its clock, the output takes `block`-frame blocks at 48 kHz by its own
    /// (from `blockDelay` seconds on), each write and block told its time; with `split`, each
    /// fragment comes in two writes, the first of `split` frames.
    /// The capture's frame f is the value f (a ramp, which Catmull-Rom reproduces exactly: a
    /// frame read between two captured ones is where it read). Following the drift, every block
    /// is checked while its values are exact enough in a Float (below 2^21): each frame one
    /// rate's step on from the last, the right channel the left's negative, and `offset` saying
    /// where its first frame read (within a frame). Returns the pass-through and, per block,
    /// when it was taken (s, output clock), how far behind the newest capture its first frame
    /// played (frames), and whether that frame was a captured one (not read between two).
    static func runTwoClocks(ppm: Double, seconds: Double, fragment: Int = 240, block: Int = 256, followsDrift: Bool = true,
                             blockDelay: Double = 0, split: Int? = nil, lean: (Int) -> Void = { _ in }) -> (PassThroughAudio, [Block]) {
        let p = PassThroughAudio(capacityFrames: 1 << 16, hold: 960, followsDrift: followsDrift)
        var captured: Int64 = 0, output: Int64 = 0
        var nextCapture = 0.0, nextBlock = blockDelay
        var chunk = [Float](repeating: 0, count: 2 * fragment)
        var out = [Float](repeating: 0, count: 2 * block)
        var blocks: [Block] = []
        while nextCapture < seconds || nextBlock < seconds {
            if nextCapture <= nextBlock {
                for i in 0..<fragment {
                    chunk[2 * i] = Float(captured + Int64(i))
                    chunk[2 * i + 1] = -Float(captured + Int64(i))
                }
                chunk.withUnsafeBufferPointer { all in
                    // In two writes 50 µs apart when `split` says where (a server's fragment read in pieces).
                    let at = UInt64(nextCapture * 1e9)
                    if let split, split > 0, split < fragment {
                        p.write(UnsafeBufferPointer(rebasing: all[..<(2 * split)]), channels: 2, firstFrame: captured, at: at)
                        p.write(UnsafeBufferPointer(rebasing: all[(2 * split)...]), channels: 2, firstFrame: captured + Int64(split), at: at + 50_000)
                    } else {
                        p.write(all, channels: 2, firstFrame: captured, at: at)
                    }
                }
                captured += Int64(fragment)
                nextCapture = Double(captured) / 48_000
            } else {
                out.withUnsafeMutableBufferPointer { b in
                    b.update(repeating: 0)
                    p.mix(into: b.baseAddress!, frames: block, firstFrame: output, at: UInt64(nextBlock * 1e9))
                }
                if out[0] != 0 {
                    blocks.append(Block(at: nextBlock, behind: Double(captured) - Double(out[0]), inTime: nextBlock * 48_000 - Double(out[0]),
                                        whole: out[0] == out[0].rounded()))
                }
                lean(p.rateErrorPPM)
                if followsDrift, out[0] != 0, out[2 * block - 2] < 2_097_152, let offset = p.offset {
                    let steps = (1..<block).map { Double(out[2 * $0] - out[2 * $0 - 2]) }
                    if let worst = steps.map({ abs($0 - 1) }).max(), worst > 0.3 {
                        Issue.record("a frame read \(worst) frames off its step at output frame \(output)")
                    }
                    if (0..<block).contains(where: { out[2 * $0 + 1] != -out[2 * $0] }) { Issue.record("the channels parted at output frame \(output)") }
                    let said = Double(output - offset), read = Double(out[0])
                    if abs(said - read) > 1 { Issue.record("offset says capture frame \(said), the block read \(read)") }
                }
                output += Int64(block)
                nextBlock = blockDelay + Double(output) / (48_000 * (1 + ppm * 1e-6))
            }
        }
        return (p, blocks)
    }

    /// A block of `runTwoClocks`: when it was taken (s, output clock), how far behind the newest
    /// capture frame written its first frame played and how far behind the capture's clock at
    /// that time (frames), and whether that frame was a captured one (not read between two).
    struct Block {
        var at: Double, behind: Double, inTime: Double, whole: Bool
    }

    /// The mean distance behind the capture (`by`: the newest frame written, or the capture's
    /// clock) over blocks taken in `from ..< to` seconds.
    static func meanBehind(_ blocks: [Block], _ from: Double, _ to: Double, by distance: KeyPath<Block, Double> = \.behind) -> Double {
        let kept = blocks.filter { $0.at >= from && $0.at < to }.map { $0[keyPath: distance] }
        return kept.reduce(0, +) / Double(max(1, kept.count))
    }

    /// An output device 300 ppm fast or slow against the capture's clock (a sound card's crystal
    /// against the system timer a null sink runs on, exaggerated): over two minutes nothing
    /// plays late and the sound stays within 1 ms of where it ran over its first second (at one
    /// frame for one frame it would have drifted 36 ms: into silence and a skip, or further
    /// behind for good).
    @Test(arguments: [300.0, -300.0])
    func theOutputFollowsTheCapturesClock(ppm: Double) {
        let (p, blocks) = Self.runTwoClocks(ppm: ppm, seconds: 120)
        #expect(p.lateFrames == 0 && p.overwrittenFrames == 0)
        let first = Self.meanBehind(blocks, 0, 1), lastMinute = Self.meanBehind(blocks, 60, 120)
        #expect(abs(lastMinute - first) <= 48, "the average distance moved \(lastMinute - first) frames (\(p.rateErrorPPM) ppm)")
        let worst = blocks.map { abs($0.behind - first) }.max() ?? .infinity
        #expect(worst <= 48 + 240 + 256, "strayed \(worst) frames from \(first)")
        // It leans about as far as the device is off (give or take the average's ripple).
        #expect(abs(Double(p.rateErrorPPM) + ppm) <= 100, "the rate leans \(p.rateErrorPPM) ppm for a device \(ppm) ppm off")
    }

    /// Clocks together, capture in 5 ms pieces and 1024-frame blocks (the distance saws by
    /// both): the rate never leans, every frame plays as captured, the distance stays put.
    @Test func clocksTogetherPlayEveryFrameAsCaptured() {
        let (p, blocks) = Self.runTwoClocks(ppm: 0, seconds: 60, fragment: 240, block: 1_024)
        #expect(p.rateErrorPPM == 0 && blocks.allSatisfy(\.whole))
        let first = Self.meanBehind(blocks, 0, 1), last = Self.meanBehind(blocks, 30, 60)
        #expect(abs(last - first) <= 12, "the average distance moved \(last - first) frames")
    }

    /// A capture fragment and an output block of one size (PipeWire's graph cycle, once `hapsync
    /// live` grew its capture's fragment to it), clocks 30 ppm apart: the block meets the
    /// capture at a phase that slides through a whole fragment every 5.6 minutes, so the newest
    /// frame written, looked at once a block, jumps by a fragment where it crosses. Held in time
    /// (the capture's position extrapolated from when it was written), the distance stays
    /// within 1 ms of where it began and the rate leans about as far as the clocks are apart,
    /// never to its limit (which chasing those jumps did).
    /// Each fragment may also reach the pass-through in pieces (`split`: 400 + 80 frames, as
    /// libpulse can hand a server's fragment over): the pieces are one arrival.
    @Test(arguments: [(30.0, nil), (-30.0, nil), (30.0, 400), (-30.0, 240)] as [(Double, Int?)])
    func aFragmentAsLongAsTheBlockIsNotChased(ppm: Double, split: Int?) {
        var maxLean = 0
        // The blocks begin where a minute's drift brings them to a capture's arrival.
        let slide = 60 * abs(ppm) * 1e-6 * 48_000
        let (p, blocks) = Self.runTwoClocks(ppm: ppm, seconds: 240, fragment: 480, block: 480, blockDelay: (ppm > 0 ? slide : 480 - slide) / 48_000,
                                            split: split, lean: { maxLean = max(maxLean, abs($0)) })
        #expect(p.lateFrames == 0 && p.overwrittenFrames == 0)
        #expect(maxLean < 500, "the rate leaned \(maxLean) ppm for clocks \(ppm) ppm apart")
        // The distance by the capture's clock: the newest frame written saws by a fragment.
        let first = Self.meanBehind(blocks, 0, 1, by: \.inTime)
        let spread = (1..<240).map { abs(Self.meanBehind(blocks, Double($0), Double($0 + 1), by: \.inTime) - first) }.max() ?? .infinity
        #expect(spread <= 48, "a second's mean distance strayed \(spread) frames from the first second's")
        let lastMinute = Self.meanBehind(blocks, 180, 240, by: \.inTime)
        #expect(abs(lastMinute - first) <= 24, "the average distance moved \(lastMinute - first) frames")
        print(String(format: "fragment = block\(split.map { " (written as \($0) + \(480 - $0))" } ?? ""), clocks %+.0f ppm apart: rate leaned at most %d ppm, a second's mean distance at most %.0f frames from the first's, the last minute's %+.0f",
                     ppm, maxLean, spread, lastMinute - first))
    }

    /// The same two clocks, one frame for one frame: the failure the rate is there for.
    @Test func oneFrameForOneFrameDriftsAway() {
        let (fast, _) = Self.runTwoClocks(ppm: 300, seconds: 120, followsDrift: false)
        #expect(fast.lateFrames > 0, "a fast device ran out of capture")
        let (_, blocks) = Self.runTwoClocks(ppm: -300, seconds: 120, followsDrift: false)
        #expect(Self.meanBehind(blocks, 60, 120) - Self.meanBehind(blocks, 0, 1) > 1_000, "a slow device fell behind for good")
    }

    /// A capture and an output run by one driver (PipeWire's node group), its cycles arriving
    /// with up to 4 ms of jitter (a card's pointer read on a timer, under emulation): turned on
    /// without following drift, every frame is played as captured, one for one, and the rate
    /// never leans, however the arrivals wander.
    @Test func turnedOnWithoutFollowingDriftEveryFrameIsPlayedAsCaptured() {
        let p = PassThroughAudio(capacityFrames: 1 << 16, hold: 960)
        #expect(p.followsDrift)
        p.activate(hold: 960, followsDrift: false)
        #expect(!p.followsDrift)
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func jitter() -> Double {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(seed >> 11) / Double(1 << 53) * 0.004
        }
        var chunk = [Float](repeating: 0, count: 2 * 256), out = [Float](repeating: 0, count: 2 * 256)
        var stepsOff = 0, between = 0, lean = 0
        for cycle in 0..<2_000 {
            let first = Int64(cycle) * 256, at = Double(first) / 48_000
            for i in 0..<256 {
                chunk[2 * i] = Float(first + Int64(i) + 1)
                chunk[2 * i + 1] = -Float(first + Int64(i) + 1)
            }
            chunk.withUnsafeBufferPointer { p.write($0, channels: 2, firstFrame: first, at: UInt64((at + jitter()) * 1e9)) }
            out.withUnsafeMutableBufferPointer { b in
                b.update(repeating: 0)
                p.mix(into: b.baseAddress!, frames: 256, firstFrame: first, at: UInt64((at + jitter()) * 1e9))
            }
            lean = max(lean, abs(p.rateErrorPPM))
            guard out[0] != 0 else { continue }
            between += (0..<256).filter { out[2 * $0] != out[2 * $0].rounded() }.count
            stepsOff += (1..<256).filter { out[2 * $0] - out[2 * $0 - 2] != 1 }.count
        }
        #expect(lean == 0 && between == 0 && stepsOff == 0, "leaned \(lean) ppm, \(between) frames read between two, \(stepsOff) steps off one")
        #expect(p.lateFrames == 0)
    }

    /// A service's pass-through is made dormant before its stream's rate is known: turned on for
    /// a 96 kHz stream, its time constants are 96 kHz's (the dead band 0.25 ms = 24 frames), not
    /// those of the 48 kHz it was made with; turned on again for 48 kHz, 48 kHz's.
    @Test func turnedOnItTakesItsStreamsRate() {
        let p = PassThroughAudio(hold: 0, active: false)
        var chunk = [Float](repeating: 0.5, count: 2 * 480)
        var out = [Float](repeating: 0, count: 2 * 256)
        var captured: Int64 = 0, output: Int64 = 0
        func oneBlock() {
            chunk.withUnsafeMutableBufferPointer { p.write(UnsafeBufferPointer($0), channels: 2, firstFrame: captured) }
            captured += 480
            out.withUnsafeMutableBufferPointer { p.mix(into: $0.baseAddress!, frames: 256, firstFrame: output) }
            output += 256
        }
        p.activate(hold: 1_920, sampleRate: 96_000)
        oneBlock()
        #expect(p.deadband == 24)
        p.deactivate()
        p.activate(hold: 960, sampleRate: 48_000)
        oneBlock()
        #expect(p.deadband == 12)
    }

    @Test func catmullRomPassesThroughItsPointsAndLines() {
        #expect(PassThroughAudio.catmullRom(1, 2, 3, 4, 0) == 2)
        #expect(abs(PassThroughAudio.catmullRom(1, 2, 3, 4, 0.25) - 2.25) < 1e-6)
        #expect(abs(PassThroughAudio.catmullRom(0, 1, 0, -1, 0.5) - 0.625) < 1e-6)
    }
}
