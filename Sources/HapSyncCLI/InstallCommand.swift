import Foundation

/// `hapsync install --prefix DIR`: the binary, the C library, its headers and pkg-config file,
/// and the Swift runtime libraries they need, so that C programs build with
/// `pkg-config --cflags --libs hapsync` and run with nothing else installed.
enum InstallCommand {
    static let prefix = Option<String?>("prefix", "DIR", .text, help: "where to install: DIR/bin, DIR/lib, DIR/include, DIR/lib/pkgconfig")

    static let command = Command(
        name: "install", summary: "install the binary, libhapsync, hapsync.h/.hpp and hapsync.pc under a prefix",
        about: """
            Copies into DIR: bin/hapsync, lib/libhapsync.so (the C API), include/hapsync.h and
            include/hapsync.hpp, lib/pkgconfig/hapsync.pc, and the Swift runtime libraries both
            need (from the toolchain they were built with) into lib/, setting the run paths
            (patchelf) so nothing else must be installed. Then:
              PKG_CONFIG_PATH=DIR/lib/pkgconfig cc game.c $(pkg-config --cflags --libs hapsync)
            builds a program that runs with no LD_LIBRARY_PATH. Files already in DIR are
            replaced (DIR is the installer's); build first (swift build -c release).
            """,
        groups: [OptionGroup([prefix])], positionals: .none,
        synopsis: ["hapsync install --prefix DIR"],
        run: run)

    /// Where the parts come from: beside the running binary (a build folder, or an installed
    /// prefix's bin), and the headers from the source tree this binary was built from.
    struct Sources {
        var binary: URL
        var library: URL
        var headers: [URL]
    }

    static func locate() throws(CLIError) -> Sources {
        let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let dir = binary.deletingLastPathComponent()
        let fm = FileManager.default
        let library = [dir.appendingPathComponent("libHapSyncCAPI.so"), dir.appendingPathComponent("../lib/libhapsync.so").standardizedFileURL]
            .first { fm.fileExists(atPath: $0.path) }
        guard let library else {
            throw .failure("libHapSyncCAPI.so is not beside \(binary.path)", hint: "build it first: swift build -c release (it builds every product)")
        }
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("CHapSync")
        let candidates = [[dir.appendingPathComponent("../include/hapsync.h"), dir.appendingPathComponent("../include/hapsync.hpp")].map(\.standardizedFileURL),
                          [source.appendingPathComponent("include/hapsync.h"), source.appendingPathComponent("cpp/hapsync.hpp")]]
        guard let headers = candidates.first(where: { $0.allSatisfy { fm.fileExists(atPath: $0.path) } }) else {
            throw .failure("cannot find hapsync.h and hapsync.hpp (looked in \(candidates.flatMap { $0.map(\.path) }.joined(separator: ", ")))")
        }
        return Sources(binary: binary, library: library, headers: headers)
    }

    static func run(_ parsed: ParsedArguments, _ context: Command.Context) throws(CLIError) {
        guard let prefixPath = parsed[prefix] else { throw .usage("install needs --prefix DIR") }
        let root = URL(fileURLWithPath: prefixPath).standardizedFileURL
        let parts = try locate()
        guard let patchelf = which("patchelf") else {
            throw .failure("patchelf is needed to set the installed files' run paths", hint: "apt-get install patchelf")
        }
        let bin = root.appendingPathComponent("bin"), lib = root.appendingPathComponent("lib")
        let include = root.appendingPathComponent("include"), pkgconfig = lib.appendingPathComponent("pkgconfig")
        let fm = FileManager.default
        func copy(_ from: URL, to: URL) throws(CLIError) {
            do {
                if fm.fileExists(atPath: to.path) || (try? fm.destinationOfSymbolicLink(atPath: to.path)) != nil { try fm.removeItem(at: to) }
                try fm.copyItem(at: from, to: to)
            } catch {
                throw .failure("cannot copy \(from.path) to \(to.path): \(error.localizedDescription)")
            }
        }
        do {
            for d in [bin, lib, include, pkgconfig] { try fm.createDirectory(at: d, withIntermediateDirectories: true) }
        } catch {
            throw .failure("cannot create the folders under \(root.path): \(error.localizedDescription)")
        }
        let installedBinary = bin.appendingPathComponent("hapsync"), installedLibrary = lib.appendingPathComponent("libhapsync.so")
        // Installing from an installed prefix onto itself: nothing to copy.
        if parts.binary.path != installedBinary.path { try copy(parts.binary, to: installedBinary) }
        if parts.library.path != installedLibrary.path { try copy(parts.library, to: installedLibrary) }
        for h in parts.headers where h.deletingLastPathComponent().path != include.path {
            try copy(h, to: include.appendingPathComponent(h.lastPathComponent))
        }
        // The Swift runtime libraries both load from the toolchain (ldd's answer).
        var runtime: [URL] = []
        for object in [parts.binary, parts.library] {
            let out = try capture("/usr/bin/ldd", [object.path])
            for line in out.split(separator: "\n") {
                guard let arrow = line.range(of: "=> "), let path = line[arrow.upperBound...].split(separator: " ").first.map(String.init),
                      path.contains("/swift/linux/") || path.contains("/swift_static/") else { continue }
                let url = URL(fileURLWithPath: path)
                if !runtime.contains(url) { runtime.append(url) }
            }
        }
        for r in runtime where r.deletingLastPathComponent().path != lib.path { try copy(r, to: lib.appendingPathComponent(r.lastPathComponent)) }
        _ = try capture(patchelf, ["--set-rpath", "$ORIGIN/../lib", installedBinary.path])
        // One change per patchelf run: 0.14 applies only one of several.
        _ = try capture(patchelf, ["--set-rpath", "$ORIGIN", installedLibrary.path])
        _ = try capture(patchelf, ["--set-soname", "libhapsync.so", installedLibrary.path])
        for r in runtime { _ = try capture(patchelf, ["--set-rpath", "$ORIGIN", lib.appendingPathComponent(r.lastPathComponent).path]) }
        let pc = """
            prefix=\(root.path)
            libdir=${prefix}/lib
            includedir=${prefix}/include

            Name: hapsync
            Description: HapSync: Core Haptics' AHAP patterns on Linux, the C API
            Version: \(HapSyncCLI.version)
            Libs: -L${libdir} -Wl,-rpath,${libdir} -lhapsync
            Cflags: -I${includedir}

            """
        do {
            try pc.write(to: pkgconfig.appendingPathComponent("hapsync.pc"), atomically: true, encoding: .utf8)
        } catch {
            throw .failure("cannot write \(pkgconfig.path)/hapsync.pc: \(error.localizedDescription)")
        }
        context.console.out("""
            installed into \(root.path):
              bin/hapsync, lib/libhapsync.so, \(runtime.count) Swift runtime libraries in lib/
              include/hapsync.h, include/hapsync.hpp, lib/pkgconfig/hapsync.pc
            build with: PKG_CONFIG_PATH=\(pkgconfig.path) cc game.c $(pkg-config --cflags --libs hapsync)

            """)
    }

    /// A program on PATH.
    static func which(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Runs a program to its end; its standard output, or a failure with its standard error.
    static func capture(_ program: String, _ args: [String]) throws(CLIError) -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = args
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        do { try p.run() } catch { throw .failure("cannot run \(program): \(error.localizedDescription)") }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw .failure("\(program) \(args.joined(separator: " ")) failed: \(String(decoding: errData, as: UTF8.self))")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
