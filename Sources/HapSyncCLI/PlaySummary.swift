import Foundation
import HapSyncAudioOutput
import HapSyncCore
import HapSyncHapticOutput
import HapSyncRuntime

/// What `play` prints at the end: what was played on which backend, commands applied, dispatch
/// and apply percentiles, real-time status, settings, audio and audio-haptic sync, the trace.
struct PlaySummary {
    let name: String
    let loops: Int
    let engine: HapticEngine
    let timeline: PatternTimeline
    let trace: TraceBackend?
    /// The signal that ended the run early, if one did.
    let interruptedBy: Int32?
    let audio: SoundServerOutput?
    /// The audio clock's fits over the run (with `audio`).
    let history: AudioClockHistory?
    /// Where each player's runs started on the audio output (player id → loop starts).
    let startFrames: [UInt32: [Int64]]
    let playbackRate: Double
    let from: Double

    /// The summary text, one labelled line per figure.
    var text: String {
        let stats = engine.statistics
        let dispatch = stats.dispatchErrors.sorted(), apply = stats.applyLatencies.sorted()
        var out = ""
        func line(_ label: String, _ value: String) { out += label.padding(toLength: 12, withPad: " ", startingAt: 0) + value + "\n" }
        line("played", "\(name)" + (loops > 1 ? " ×\(loops)" : "") + " on \(engine.configuration.backend.name)"
             + (interruptedBy.map { " (interrupted by \(SignalWatch.name(of: $0)): stopped at once, backend silenced)" } ?? ""))
        line("commands", Self.commandsLine(stats, scheduled: scheduledCommands))
        line("dispatch", "p50 \(Self.micro(Self.percentile(dispatch, 50))), p99 \(Self.micro(Self.percentile(dispatch, 99))), max \(Self.micro(dispatch.last ?? 0)) (released − scheduled)")
        line("apply", "p50 \(Self.micro(Self.percentile(apply, 50))), p99 \(Self.micro(Self.percentile(apply, 99))), max \(Self.micro(apply.last ?? 0)) (applied − released)")
        line("real-time", engine.realtimeStatus.description)
        let policy = engine.policy
        if !policy.hapticsEnabled || policy.intensityScale != 1 || playbackRate != 1 || from != 0 {
            var parts: [String] = []
            if !policy.hapticsEnabled { parts.append("haptics off") }
            if policy.intensityScale != 1 { parts.append("intensity × \(policy.intensityScale)") }
            if playbackRate != 1 { parts.append("playback rate \(playbackRate)") }
            if from != 0 { parts.append("from \(seconds(from))") }
            line("settings", parts.joined(separator: ", "))
        }
        if let audio {
            line("audio", "\(audio.serverDescription) at \(Int(audio.sampleRate)) Hz, \(Int((audio.targetLatency * 1000).rounded())) ms target latency\(audio.currentLatency > audio.targetLatency ? " (grown to \(Int((audio.currentLatency * 1000).rounded())) ms after underruns)" : "")\(audio.quantum.map { ", quantum \($0) frames (\(String(format: "%.1f", Double($0) / audio.sampleRate * 1000)) ms)" } ?? ""), \(stats.audioUnderruns) underruns, sink clock \(String(format: "%+.1f", audio.clock.rateErrorPPM)) ppm against CLOCK_MONOTONIC"
                 + (audio.droppedVoices > 0 ? ", \(audio.droppedVoices) voices dropped (more than \(PulseAudioOutput.voiceCapacity) at once)" : ""))
            // Each haptic command against the moment its audio frame is heard, by the clock's fit
            // as it stood then (`history`), else the final fit.
            var offsets: [Int64] = []
            let fit = audio.clock.fit
            let heard: (Int64) -> UInt64? = { frame in history?.heard(frame) ?? fit.time(ofFrame: frame) }
            for c in stats.commands where c.patternTime >= 0 {
                guard let starts = startFrames[c.player], !starts.isEmpty else { continue }
                // The pass this command belongs to: the latest start heard by the time the
                // command's own pattern time began (its applied time less its pattern time), so a
                // command at a pass's end is not taken for the next pass's.
                let into = UInt64(nanosecondsOf: c.patternTime / playbackRate)
                let begun = c.applied >= into ? c.applied - into : 0
                let frame = starts.last { (heard($0) ?? 0) <= begun + 50_000_000 } ?? starts[0]
                if let offset = AudioHapticOffset.offset(hapticAt: c.applied, patternTime: c.patternTime, startFrame: frame, rate: playbackRate,
                                                         sampleRate: audio.sampleRate, heard: heard) {
                    // Felt: applied + the lead it was released with (raised leads count from then on).
                    offsets.append(offset + Int64(c.extraLead))
                }
            }
            // Commands go out `hapticLatency` before they are felt (a waveform stream's buffer, a
            // pad's delay), and each its `extraLead` more (added above): the sync is what is felt
            // against what is heard.
            let lead = Int64(engine.configuration.hapticLatency)
            let sorted = offsets.map { $0 + lead }.sorted()
            if !sorted.isEmpty {
                line("sync", "haptic applied" + (lead > 0 ? " + \(Self.micro(lead)) haptic latency" : "") + " − audio heard: p50 \(Self.micro(Self.percentile(sorted, 50))), p99 \(Self.micro(Self.percentile(sorted, 99))), max |\(Self.micro(sorted.map { abs($0) }.max()!))| over \(sorted.count) commands (engine's audio clock)")
            }
        }
        if let waveform = Self.waveform(in: engine.configuration.backend) {
            line("waveform", "\(waveform.device): "
                 + (waveform.mixesIntoAudio ? "each tap and level of a player with audio at its sound's own frame (sample-locked), " : "placed on the sink's clock, ")
                 + "\(plural(waveform.lateCommands, "command")) late"
                 + (waveform.extraLead > 0
                    ? "; haptic latency raised by \(Self.micro(Int64(waveform.extraLead))): the sink renders further ahead of its sound than the stream's latency asked"
                    : ""))
        }
        if let trace {
            line("trace", "\(trace.path) (\(trace.format == .chrome ? "Chrome trace events" : "JSON Lines"), \(trace.recordsWritten) records)")
        }
        return out
    }

    /// The waveform output among the backends, if any.
    static func waveform(in backend: HapticBackend) -> WaveformOutput? {
        (backend as? WaveformOutput) ?? (backend as? FanOutBackend)?.children.lazy.compactMap { $0 as? WaveformOutput }.first
    }

    /// The commands the run schedules when it plays to its end: the first loop's from `from` (and
    /// the level in force there), then whole loops.
    var scheduledCommands: Int {
        let skipped = timeline.commands.prefix { $0.time < from }
        // A start inside a continuous event first applies the level in force there.
        let inForce = from > 0 && (skipped.last { $0.kind == .level }?.intensity ?? 0) > 0 ? 1 : 0
        return timeline.commands.count - skipped.count + inForce + timeline.commands.count * (loops - 1)
    }

    /// "147 applied of 149 scheduled, 2 silent transients skipped, 0 ring overflows (+ 1 final
    /// stop)": what the backend got, and where every scheduled command that it did not get went.
    static func commandsLine(_ stats: EngineStatistics, scheduled: Int) -> String {
        var parts = ["\(stats.applied - stats.stopsApplied) applied of \(scheduled) scheduled"]
        if stats.skippedTransients > 0 { parts.append("\(plural(stats.skippedTransients, "silent transient")) skipped") }
        if stats.suppressedTransients > 0 { parts.append("\(plural(stats.suppressedTransients, "transient")) dropped (haptics off)") }
        parts.append("\(stats.outputOverflows) ring overflows")
        return parts.joined(separator: ", ") + " (+ \(plural(stats.stopsApplied, "final stop")))"
    }

    /// The p-th percentile of sorted values (nearest rank), 0 for none.
    private static func percentile(_ sorted: [Int64], _ p: Double) -> Int64 { sorted.nearestRankPercentile(p) ?? 0 }

    /// Nanoseconds as microseconds, one decimal below 100 µs.
    private static func micro(_ ns: Int64) -> String {
        let us = Double(ns) / 1000
        return abs(us) < 100 ? "\((us * 10).rounded() / 10) µs" : "\(Int(us.rounded())) µs"
    }
}
