import Foundation

/// Detections scored against labels, the way MIREX and mir_eval score onsets: each detection
/// matches at most one label within ±tolerance and each label at most one detection; the matching
/// is a maximum one (as many pairs as possible). Counts add up over files. What
/// `hapsync-bench generate` and the tests score onset detection with.
public struct OnsetScore: Sendable, Equatable {
    /// Labels with a detection.
    public var hits = 0
    /// Detections with no label.
    public var falseAlarms = 0
    /// Labels with no detection.
    public var misses = 0

    /// hits / detections (1 when nothing was detected).
    public var precision: Double { hits + falseAlarms == 0 ? 1 : Double(hits) / Double(hits + falseAlarms) }
    /// hits / labels (1 when there were no labels).
    public var recall: Double { hits + misses == 0 ? 1 : Double(hits) / Double(hits + misses) }
    /// F-measure: 2PR / (P + R).
    public var f: Double { precision + recall == 0 ? 0 : 2 * precision * recall / (precision + recall) }

    /// Adds another file's counts.
    public static func + (a: OnsetScore, b: OnsetScore) -> OnsetScore {
        OnsetScore(hits: a.hits + b.hits, falseAlarms: a.falseAlarms + b.falseAlarms, misses: a.misses + b.misses)
    }

    /// "P / R / F" with two decimals.
    public var summary: String { String(format: "%.2f / %.2f / %.2f", precision, recall, f) }

    /// The counts of one file's matching.
    public init(labels: [Double], detections: [Double], tolerance: Double) {
        let pairs = OnsetScore.match(labels: labels, detections: detections, tolerance: tolerance)
        hits = pairs.count
        falseAlarms = detections.count - pairs.count
        misses = labels.count - pairs.count
    }

    /// Counts given directly.
    public init(hits: Int = 0, falseAlarms: Int = 0, misses: Int = 0) {
        self.hits = hits
        self.falseAlarms = falseAlarms
        self.misses = misses
    }

    /// A maximum one-to-one matching of `labels` and `detections` (both ascending) within
    /// ±`tolerance`, as (label index, detection index) pairs.
    ///
    /// Every label's window is an interval of the same width, so the windows' order is the labels'
    /// order, and a sweep that gives each label, in order, the earliest free detection in its
    /// window finds a largest matching (the greedy choice never takes a detection a later label
    /// needed more: any detection a later label can reach that is earlier than this one is also in
    /// this label's window). Where a label could take either of two detections and the later one
    /// is closer and not reachable by the next label, it takes the closer one, so that offsets
    /// are not skewed by the sweep.
    public static func match(labels: [Double], detections: [Double], tolerance: Double) -> [(label: Int, detection: Int)] {
        var pairs: [(label: Int, detection: Int)] = []
        var j = 0
        for (i, l) in labels.enumerated() {
            while j < detections.count, detections[j] < l - tolerance { j += 1 }
            guard j < detections.count, detections[j] <= l + tolerance else { continue }
            var chosen = j
            let nextLabel = i + 1 < labels.count ? labels[i + 1] : Double.infinity
            if j + 1 < detections.count, detections[j + 1] <= l + tolerance,
               abs(detections[j + 1] - l) < abs(detections[j] - l), detections[j + 1] < nextLabel - tolerance {
                chosen = j + 1
            }
            pairs.append((i, chosen))
            j = chosen + 1
        }
        return pairs
    }
}
