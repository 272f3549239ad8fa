import Foundation

/// Where tests find the checkout's files: the package root is found once, from this source file's
/// own path, so no test climbs from its own `#filePath`.
public enum TestFiles {
    /// The package root (the folder holding Package.swift).
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The bundled assets, Assets/.
    public static let assets = packageRoot.appendingPathComponent("Assets")

    /// A file under Assets/ by its path there ("clicks.ahap", "audio/click-48k-mono-16.wav").
    public static func asset(_ path: String) -> URL { assets.appendingPathComponent(path) }

    /// The real AHAP files and their audio from Apple's Unity plug-ins (Apache-2.0), in
    /// ../shared/conformance/apple-unityplugins beside the checkout.
    public static let conformance = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/conformance/apple-unityplugins")
}

/// A fresh, empty folder under the system's temporary directory, removed with everything in it by
/// `remove()` or when the value goes away. As a suite's stored property it lasts for its test (a
/// Swift Testing suite instance lives that long); a local is removed by `defer { dir.remove() }`,
/// which also keeps it alive until then (without a later mention, a local may be released after
/// its last use, before the files in it are done with).
public final class TemporaryDirectory: Sendable {
    /// The folder.
    public let url: URL

    /// Creates `hapsync-LABEL-UUID` in the temporary directory.
    public init(_ label: String = "test") throws {
        url = try Self.create(label)
    }

    /// Creates `hapsync-LABEL-UUID` in the temporary directory and returns it, not owned by any
    /// value: for a helper that hands out files in it, whose caller removes it when done.
    public static func create(_ label: String = "test") throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("hapsync-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The folder's path.
    public var path: String { url.path }

    /// `name` in the folder (not created).
    public func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// Removes the folder and everything in it (again at deinit: harmless).
    public func remove() { try? FileManager.default.removeItem(at: url) }

    deinit { remove() }
}
