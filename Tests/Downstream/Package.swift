// swift-tools-version:6.0
// A package outside HapSync that depends on it by path, as a user's does (.ci/downstream-check
// puts it beside a link named "hapsync" to the checkout, builds it with no warning allowed, in
// Swift 6 language mode, and runs it against a trace; .ci/vm-evdev-test runs it on a rumble pad).
import PackageDescription

let package = Package(
    name: "downstream",
    dependencies: [
        .package(path: "../hapsync"),
    ],
    targets: [
        // Core Haptics code as Apple's documentation writes it, with `import CoreHaptics`.
        .executableTarget(name: "ios-port", dependencies: [.product(name: "CoreHaptics", package: "hapsync")]),
        // HapSync's own API through the umbrella module, as docs/swift-api.md shows it.
        .executableTarget(name: "hapsync-api", dependencies: [.product(name: "HapSync", package: "hapsync")]),
    ]
)
