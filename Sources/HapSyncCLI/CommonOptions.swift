import Foundation

/// Options several commands share, declared once.
enum CommonOptions {
    /// `--json`: machine-readable output.
    static let json = Option(flag: "json", help: "print one JSON document for machines")

    /// `--resources DIR`: more folders to find audio files in.
    static let resources = Option<[URL]>(repeatable: "resources", "DIR", .folder,
                                         help: "also look for audio files (EventWaveformPath) here, after the AHAP file's own folder")

    /// `--rate HZ`: the control rate of the continuous haptic signal.
    static let controlRate = Option<Double>("rate", "HZ", .decimal("Hz", .above(0, upTo: 100_000)), default: 1000,
                                            help: "control rate of the continuous signal")

    /// `--force` for commands that write `--out PATH`.
    static let forceOutput = Option(flag: "force", help: "replace PATH if it exists")
}
