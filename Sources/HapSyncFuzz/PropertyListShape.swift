import Foundation

/// A nested property-list value built from fuzz bytes, each byte an instruction: open a Swift or
/// Foundation array or dictionary, close one, add a string, number, Boolean, `NSNull` or a value of
/// no property-list type, add again the last value added (shared storage), or add an open
/// Foundation collection to the one being built (a collection that contains itself).
///
/// Nesting is capped at `maxOpen` (well past the reader's 64 levels), and a collection at
/// `maxValues` values counted as if nothing were shared, so that Foundation's own bridging, which
/// copies a Swift collection added to a Foundation one, recursively and shared parts as often as
/// they appear, stays within the stack and within milliseconds (the converter's own bounds are
/// what is being tested). `release()` empties every Foundation collection made, breaking the
/// cycles so that nothing leaks.
struct PropertyListShape {
    /// The value built (nil when the bytes closed nothing).
    private(set) var value: Any?
    /// Every Foundation collection made, to empty in `release()`.
    private var made: [AnyObject] = []

    /// Deepest nesting built.
    static let maxOpen = 256
    /// Most values in one collection, counted as if nothing were shared (a Foundation collection
    /// added again counts once: bridging does not copy it).
    static let maxValues = 1 << 16

    /// Keys and strings, chosen by a byte: AHAP's names, so that shapes reach the reader's rules.
    static let names = ["Version", "Pattern", "Event", "Parameter", "ParameterCurve", "Time", "EventType", "EventDuration",
                        "EventParameters", "ParameterID", "ParameterValue", "ParameterCurveControlPoints", "EventWaveformPath",
                        "Metadata", "HapticTransient", "HapticContinuous", "AudioCustom", "HapticIntensity", "a.wav", ""]

    /// One collection being built.
    private enum Kind {
        case swiftArray([Any])
        case swiftDictionary([String: Any])
        case array(NSMutableArray)
        case dictionary(NSMutableDictionary)
    }

    /// A collection being built and how many values it holds, counted as `maxValues` counts.
    private struct Frame {
        var kind: Kind
        var values = 1
    }

    init(_ data: Data) {
        let bytes = [UInt8](data)
        var frames: [Frame] = []
        var last: (value: Any, values: Int)?
        var i = 0
        func next() -> UInt8 {
            defer { i += 1 }
            return i < bytes.count ? bytes[i] : 0
        }
        func add(_ v: Any, values: Int = 1, to frames: inout [Frame], key: UInt8) {
            guard var top = frames.popLast() else {
                value = v
                last = (v, values)
                return
            }
            defer { frames.append(top) }
            guard top.values + values <= Self.maxValues else { return }
            last = (v, values)
            top.values += values
            let k = Self.names[Int(key) % Self.names.count]
            switch top.kind {
            // Emptied first, so that the collection is not copied to be appended to.
            case .swiftArray(var a): top.kind = .swiftArray([]); a.append(v); top.kind = .swiftArray(a)
            case .swiftDictionary(var d): top.kind = .swiftDictionary([:]); d[k] = v; top.kind = .swiftDictionary(d)
            case .array(let a): a.add(v)
            case .dictionary(let d): d[k] = v
            }
        }
        func close(_ frames: inout [Frame], key: UInt8) {
            guard let top = frames.popLast() else { return }
            switch top.kind {
            case .swiftArray(let a): add(a, values: top.values, to: &frames, key: key)
            case .swiftDictionary(let d): add(d, values: top.values, to: &frames, key: key)
            case .array(let a): add(a, to: &frames, key: key)
            case .dictionary(let d): add(d, to: &frames, key: key)
            }
        }
        while i < bytes.count {
            let op = next()
            switch op % 12 {
            case 0 where frames.count < Self.maxOpen: frames.append(Frame(kind: .swiftArray([])))
            case 1 where frames.count < Self.maxOpen: frames.append(Frame(kind: .swiftDictionary([:])))
            case 2 where frames.count < Self.maxOpen:
                let a = NSMutableArray()
                made.append(a)
                frames.append(Frame(kind: .array(a)))
            case 3 where frames.count < Self.maxOpen:
                let d = NSMutableDictionary()
                made.append(d)
                frames.append(Frame(kind: .dictionary(d)))
            case 4: close(&frames, key: next())
            case 5: add(Self.names[Int(next()) % Self.names.count], to: &frames, key: next())
            case 6: add(Double(Int8(bitPattern: next())) / 8, to: &frames, key: next())
            case 7: add(op & 0x10 != 0, to: &frames, key: next())
            case 8: add(NSNull(), to: &frames, key: next())
            case 9:
                // An open Foundation collection, chosen by the next byte, added inside itself.
                let open = frames.compactMap { f -> AnyObject? in
                    switch f.kind {
                    case .array(let a): return a
                    case .dictionary(let d): return d
                    default: return nil
                    }
                }
                let pick = next()
                if !open.isEmpty { add(open[Int(pick) % open.count], to: &frames, key: next()) }
            case 10: if let last { add(last.value, values: last.values, to: &frames, key: next()) }
            case 11: add(Date(timeIntervalSince1970: 0), to: &frames, key: next())
            default: break
            }
        }
        while !frames.isEmpty { close(&frames, key: 0) }
    }

    /// Empties every Foundation collection made, so that none is kept alive by a cycle.
    func release() {
        for c in made {
            (c as? NSMutableArray)?.removeAllObjects()
            (c as? NSMutableDictionary)?.removeAllObjects()
        }
    }
}
