import Foundation
import HapSyncAHAP
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime

/// Decodes the audio a timeline's voices can play, at load time: only what they can reach, each
/// file once, shared with the other players that hold it (`AudioSampleCache`), and within one
/// limit a pattern. What is decoded and the limit are `AudioDecodingBudget`'s rule, the one
/// `hapsync validate` applies to the files' headers (at 48 kHz; here at the stream's real rate).
///
/// **Only what plays.** A voice with a known end (its `EventDuration`, or its file's length)
/// reads at most (end − start) ÷ the slowest player rate (0.01, `HapticPatternPlayer.playbackRate`)
/// × the fastest pitch rate (2, at AudioPitch 1) seconds of its file, from its start: slower
/// playback lengthens a voice in real time while its file keeps its own speed. So a voice that
/// plays 0.2 s of a ten-minute file decodes 40 s of it, not ten minutes; a voice whose end is
/// unknown decodes the whole file. A file several voices use is decoded once, as far as the
/// furthest of them reads; a looping voice wraps only if it reads the whole file, which is then
/// decoded whole.
///
/// **The limit.** The samples one pattern holds (each of its files once, stereo float at the
/// output rate, cached ones included) are at most `AudioFileDecoder.maxDecodedBytes`; a file that
/// would pass it fails before it is decoded, with an error naming the file and the limit.
public enum PatternAudioLoader {
    /// The most seconds of its file, from the file's start, that a voice can read; nil for all of
    /// it (`AudioDecodingBudget.secondsRead`).
    public static func secondsRead(by voice: AudioVoice) -> Double? {
        AudioDecodingBudget.secondsRead(start: voice.start, end: voice.end)
    }

    /// Samples for each voice of `timeline` (nil for tones), decoded at `sampleRate` from `files`
    /// (waveform path → resolved file), reusing and filling `cache` (keyed by file and rate).
    public static func samples(for timeline: PatternTimeline, files: [String: URL], sampleRate: Double,
                               cache: AudioSampleCache,
                               limitBytes: Int = AudioFileDecoder.maxDecodedBytes) throws(AudioFileDecoder.LoadError) -> [AudioSamples?] {
        // What each file must provide: the furthest any of its voices reads (nil: all of it).
        var reads: [(file: URL, seconds: Double?)] = []
        for v in timeline.voices {
            guard case .file(let path) = v.source else { continue }
            guard let url = files[path] else {
                throw .unreadable(path: path, reason: "not resolved (see 'hapsync validate' for the folders searched)")
            }
            reads.append((url, secondsRead(by: v)))
        }

        var used = 0
        var decoded: [URL: AudioSamples] = [:]
        for (url, seconds) in AudioDecodingBudget.reach(reads) {
            let key = "\(url.path)@\(sampleRate)", partKey = key + " (first part)"
            let budget = limitBytes - used
            var cached: AudioSamples?
            if let whole = cache.samples(key), AudioDecodingBudget.fits(frames: whole.frames, budget: budget) {
                cached = whole
            } else if let seconds, let part = cache.samples(partKey), part.frames > AudioFileInfo.frameCount(seconds, rate: sampleRate) {
                cached = part
            }
            let samples: AudioSamples
            if let cached, AudioDecodingBudget.fits(frames: cached.frames, budget: budget) {
                samples = cached
            } else {
                let (fresh, complete, _) = try AudioFileDecoder.decode(url, sampleRate: sampleRate, seconds: seconds, budget: budget, limit: limitBytes)
                cache.store(fresh, as: complete ? key : partKey)
                samples = fresh
            }
            used += AudioDecodingBudget.bytes(frames: samples.frames)
            decoded[url] = samples
        }
        return timeline.voices.map { v in
            guard case .file(let path) = v.source, let url = files[path] else { return nil }
            return decoded[url]
        }
    }
}
