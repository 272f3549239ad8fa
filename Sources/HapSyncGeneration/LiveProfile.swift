import Foundation
import HapSyncAHAP

/// How `hapsync live` turns what it hears into haptics: one transient per onset, its intensity
/// from the onset's felt loudness through a gain and a response curve, dropped under a floor, then
/// scaled per kind of actuator; its sharpness from the sound's centroid
/// (`HapticGenerator.sharpness(centroid:)`, as `generate` does).
///
/// The transient's level before the curve is `0.3 + 0.7 × loudness` (loudness 0...1 from the
/// detector), as `generate` maps an onset's loudness; then `min(1, gain × level^curve)`; a
/// result under `floor` plays nothing. A rumble pad gets that × `rumble`, a voice-coil actuator
/// (a waveform output) × `voiceCoil`; a shaker's drive is low-passed at `lowPassHz` when set.
///
/// A profile file is a JSON object with any of these keys (the rest from the built-in
/// `dualsense`): `gain` (0...4), `curve` (0.25...4; 1 is linear, above 1 quiet hits fall away),
/// `floor` (0...1), `rumble` (0...1), `voiceCoil` (0...1), `lowPassHz` (20...1000, or null).
/// An unknown key or a value out of range is an error naming the file, the key and the value.
public struct LiveProfile: Sendable, Equatable {
    /// The profile's name (a built-in's, or the file's path).
    public var name: String
    /// Multiplies the level, 0...4.
    public var gain: Double
    /// The response curve's exponent, 0.25...4.
    public var curve: Double
    /// Levels under this (after gain and curve) play nothing, 0...1.
    public var floor: Double
    /// A rumble pad's share, 0...1.
    public var rumble: Double
    /// A voice-coil actuator's share (waveform outputs), 0...1.
    public var voiceCoil: Double
    /// A low-pass on a waveform drive, Hz (a bass shaker's), or nil for none.
    public var lowPassHz: Double?

    /// The ranges a file's values must lie in, by key (one table for reading and for the docs).
    public static let ranges: [(key: String, range: ClosedRange<Double>)] = [
        ("gain", gainRange), ("curve", 0.25...4), ("floor", 0...1), ("rumble", 0...1), ("voiceCoil", 0...1), ("lowPassHz", 20...1000),
    ]
    /// The gain's range (a file's `gain`, serve's `/hapsync/live/gain`).
    public static let gainRange = 0.0...4.0

    /// A DualSense's voice coils (and its rumble emulation): full level, a slight curve that
    /// keeps quiet hits light, a low floor.
    public static let dualsense = LiveProfile(name: "dualsense", gain: 1, curve: 1.5, floor: 0.05, rumble: 1, voiceCoil: 1, lowPassHz: nil)
    /// Rumble pads (eccentric motors start late and coast): a stronger gain, a higher floor so
    /// that weak hits do not blur into a hum.
    public static let rumble = LiveProfile(name: "rumble", gain: 1.2, curve: 1, floor: 0.25, rumble: 1, voiceCoil: 0.8, lowPassHz: nil)
    /// Bass shakers fed as audio: the drive low-passed at 120 Hz, gentler voice-coil level.
    public static let shaker = LiveProfile(name: "shaker", gain: 1, curve: 1.2, floor: 0.1, rumble: 1, voiceCoil: 0.8, lowPassHz: 120)
    /// The built-ins, by name.
    public static let builtIns = [dualsense, rumble, shaker]

    /// The level of a transient of felt `loudness` (0...1) before the per-actuator share, or nil
    /// under the floor.
    public func level(loudness: Double) -> Double? {
        let base = 0.3 + 0.7 * min(max(loudness.isFinite ? loudness : 0, 0), 1)
        let shaped = min(1, gain * pow(base, curve))
        return shaped < floor || shaped <= 0 ? nil : shaped
    }

    /// The continuous layer's intensity control for a smoothed felt `level` (0...1, the
    /// `LevelFollower`'s): `min(1, gain × level^curve)`, 0 under the floor. With `--style`.
    public func continuousLevel(_ level: Double) -> Double {
        let shaped = min(1, gain * pow(min(max(level.isFinite ? level : 0, 0), 1), curve))
        return shaped < floor ? 0 : shaped
    }

    /// Why a profile could not be had: the name or file, and what was wrong.
    public struct LoadError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The name or file path given.
        public var source: String
        /// What was wrong with it.
        public var problem: String
        /// "profile FILE: problem".
        public var description: String { "profile \(source): \(problem)" }
    }

    /// The largest profile file read, bytes.
    public static let maxBytes = 65_536

    /// A built-in by name, else the JSON file at that path (keys as the type's summary says).
    public static func named(_ nameOrPath: String) throws(LoadError) -> LiveProfile {
        if let builtIn = builtIns.first(where: { $0.name == nameOrPath }) { return builtIn }
        guard nameOrPath.contains("/") || nameOrPath.hasSuffix(".json") else {
            throw LoadError(source: nameOrPath, problem: "not a built-in (\(builtIns.map(\.name).joined(separator: ", "))) nor a file path (a path has a '/' or ends in .json)")
        }
        // A regular file only (a FIFO or a device would block or never end), read to 64 KiB + 1.
        let data: Data
        do {
            let handle = try RegularFile.open(nameOrPath)
            data = try handle.read(upToCount: maxBytes + 1) ?? Data()
        } catch let failure as RegularFile.Failure {
            throw LoadError(source: nameOrPath, problem: failure.description)
        } catch {
            throw LoadError(source: nameOrPath, problem: "cannot be read (\((error as NSError).localizedDescription))")
        }
        guard data.count <= maxBytes else { throw LoadError(source: nameOrPath, problem: "is over \(maxBytes) bytes; a profile is a small JSON object (at most 64 KiB)") }
        return try parse(data, source: nameOrPath)
    }

    /// A profile from a file's bytes (`source` names it in errors).
    public static func parse(_ data: Data, source: String) throws(LoadError) -> LiveProfile {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw LoadError(source: source, problem: "is not JSON (\((error as NSError).userInfo["NSDebugDescription"] as? String ?? "unreadable"))")
        }
        guard let members = object as? [String: Any] else {
            throw LoadError(source: source, problem: "must be a JSON object of settings (keys: \(ranges.map(\.key).joined(separator: ", ")))")
        }
        var profile = dualsense
        profile.name = source
        for key in members.keys.sorted() {
            guard let range = ranges.first(where: { $0.key == key })?.range else {
                throw LoadError(source: source, problem: "unknown key '\(key)' (known: \(ranges.map(\.key).joined(separator: ", ")))")
            }
            let value = members[key]!
            if key == "lowPassHz", value is NSNull {
                profile.lowPassHz = nil
                continue
            }
            guard let number = value as? NSNumber, !isBoolean(number), case let x = number.doubleValue, x.isFinite else {
                throw LoadError(source: source, problem: "'\(key)' must be a number in \(text(range)), got \(describe(value))")
            }
            guard range.contains(x) else {
                throw LoadError(source: source, problem: "'\(key)' is \(x), outside \(text(range))")
            }
            switch key {
            case "gain": profile.gain = x
            case "curve": profile.curve = x
            case "floor": profile.floor = x
            case "rumble": profile.rumble = x
            case "voiceCoil": profile.voiceCoil = x
            default: profile.lowPassHz = x
            }
        }
        return profile
    }

    /// JSON's true and false come as NSNumbers of type char ("c"); JSON numbers never do.
    private static func isBoolean(_ n: NSNumber) -> Bool { String(cString: n.objCType) == "c" }

    private static func text(_ r: ClosedRange<Double>) -> String {
        func n(_ x: Double) -> String { x == x.rounded() ? String(Int(x)) : String(x) }
        return "\(n(r.lowerBound))...\(n(r.upperBound))"
    }

    private static func describe(_ value: Any) -> String {
        switch value {
        case let s as String: return "the string \"\(s.prefix(40))\""
        case let n as NSNumber where isBoolean(n): return n.boolValue ? "true" : "false"
        case is NSNull: return "null"
        case is [Any]: return "an array"
        case is [String: Any]: return "an object"
        default: return "\(value)"
        }
    }
}

/// What `hapsync live` plays: transients at onsets (the default), or with them a continuous layer
/// that follows the sound's felt loudness and brightness as `generate`'s styles do.
public enum LiveStyle: String, Sendable, CaseIterable {
    /// A transient at each onset, nothing between (drums, impacts, UI sounds).
    case transients
    /// Transients over a quiet continuous layer (`GenerationStyle.percussive`).
    case percussive
    /// Transients over a continuous layer at a little over half strength (songs; `.balanced`).
    case balanced
    /// The continuous layer alone at full strength (engines, rain, ambience; `.ambient`).
    case ambient

    /// The generator's style it follows; nil: transients alone.
    public var generation: GenerationStyle? {
        switch self {
        case .transients: return nil
        case .percussive: return .percussive
        case .balanced: return .balanced
        case .ambient: return .ambient
        }
    }

    /// Whether onsets become transients.
    public var hasTransients: Bool { generation?.hasTransients ?? true }
}
