import Foundation

/// `hapsync install --prefix DIR`: the binary, the C library, its headers and pkg-config file,
/// the Swift runtime libraries they need, the manual page and the shell completions, so that C
/// programs build with `pkg-config --cflags --libs hapsync` and run with nothing else installed,
/// and `--prefix ~/.local` gives a user `hapsync`, `man hapsync` and tab completion.
enum InstallCommand {
    static let prefix = Option<String?>(
        "prefix", "DIR", .text, help: "where to install: DIR/bin, DIR/lib, DIR/include, DIR/share (created if missing; files there are replaced)")

    static let command = Command(
        name: "install", summary: "install the binary, libhapsync, its headers and hapsync.pc, the manual page and shell completions",
        about: """
            Copies into DIR: bin/hapsync, lib/libhapsync.so (the C API), include/hapsync.h and
            include/hapsync.hpp, lib/pkgconfig/hapsync.pc, and the Swift runtime libraries both
            need (from the toolchain they were built with) into lib/, setting the run paths
            (patchelf) so nothing else must be installed; and writes the manual page
            share/man/man1/hapsync.1 and completions for bash
            (share/bash-completion/completions/hapsync), zsh (share/zsh/site-functions/_hapsync)
            and fish (share/fish/vendor_completions.d/hapsync.fish), with LICENSE and NOTICE in
            share/doc/hapsync (the Apache License goes with the copies). Then
              cc game.c $(PKG_CONFIG_PATH=DIR/lib/pkgconfig pkg-config --cflags --libs hapsync) -o game
            builds a program that runs with no LD_LIBRARY_PATH. At the end it says what, if
            anything, a shell needs to find them (PATH, fpath for zsh). DIR is created if missing
            and is the installer's: files already there under these names are replaced, nothing
            else is touched. Build first (swift build -c release); --prefix ~/.local installs for
            this user alone.
            """,
        groups: [OptionGroup([prefix])], positionals: .none,
        synopsis: ["hapsync install --prefix DIR"],
        run: run)

    /// Where the parts come from: beside the running binary (a build folder, or an installed
    /// prefix's bin), and the headers and licence files from the source tree this binary was
    /// built from (or the installed prefix's own).
    struct Sources {
        var binary: URL
        var library: URL
        var headers: [URL]
        /// LICENSE and NOTICE: the Apache License asks that they go with the copies made (the
        /// Swift runtime libraries among them).
        var licence: [URL]
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
        let checkout = source.deletingLastPathComponent().deletingLastPathComponent()
        let licences = [["LICENSE", "NOTICE"].map { dir.appendingPathComponent("../" + docFolder + "/" + $0).standardizedFileURL },
                        ["LICENSE", "NOTICE"].map { checkout.appendingPathComponent($0) }]
        guard let licence = licences.first(where: { $0.allSatisfy { fm.fileExists(atPath: $0.path) } }) else {
            throw .failure("cannot find LICENSE and NOTICE (looked in \(licences.flatMap { $0.map(\.path) }.joined(separator: ", ")))")
        }
        return Sources(binary: binary, library: library, headers: headers, licence: licence)
    }

    static func run(_ parsed: ParsedArguments, _ context: Command.Context) throws(CLIError) {
        guard let prefixPath = parsed[prefix] else { throw .usage("install needs --prefix DIR") }
        let root = URL(fileURLWithPath: prefixPath).standardizedFileURL
        try checkPrefix(root)
        let parts = try locate()
        guard let patchelf = which("patchelf") else {
            throw .failure("patchelf is needed to set the installed files' run paths", hint: "apt-get install patchelf")
        }
        let bin = root.appendingPathComponent("bin"), lib = root.appendingPathComponent("lib")
        let include = root.appendingPathComponent("include"), pkgconfig = lib.appendingPathComponent("pkgconfig")
        let generated = generatedFiles(prefix: root.path, date: pageDate(context.environment))
        let fm = FileManager.default
        func copy(_ from: URL, to: URL) throws(CLIError) {
            do {
                if fm.fileExists(atPath: to.path) || (try? fm.destinationOfSymbolicLink(atPath: to.path)) != nil { try fm.removeItem(at: to) }
                try fm.copyItem(at: from, to: to)
            } catch {
                throw .failure("cannot copy \(from.path) to \(to.path): \(error.localizedDescription)")
            }
        }
        let folders = [bin, lib, include, pkgconfig] + generated.map { root.appendingPathComponent($0.path).deletingLastPathComponent() }
        for d in folders {
            do { try fm.createDirectory(at: d, withIntermediateDirectories: true) } catch {
                throw .failure("cannot create \(d.path): \(error.localizedDescription)")
            }
        }
        let installedBinary = bin.appendingPathComponent("hapsync"), installedLibrary = lib.appendingPathComponent("libhapsync.so")
        // Installing from an installed prefix onto itself: nothing to copy.
        if parts.binary.path != installedBinary.path { try copy(parts.binary, to: installedBinary) }
        if parts.library.path != installedLibrary.path { try copy(parts.library, to: installedLibrary) }
        for h in parts.headers where h.deletingLastPathComponent().path != include.path {
            try copy(h, to: include.appendingPathComponent(h.lastPathComponent))
        }
        let doc = root.appendingPathComponent(docFolder)
        do { try fm.createDirectory(at: doc, withIntermediateDirectories: true) } catch {
            throw .failure("cannot create \(doc.path): \(error.localizedDescription)")
        }
        for l in parts.licence where l.deletingLastPathComponent().path != doc.path {
            try copy(l, to: doc.appendingPathComponent(l.lastPathComponent))
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
        try write(pc, to: pkgconfig.appendingPathComponent("hapsync.pc"))
        for file in generated { try write(file.text, to: root.appendingPathComponent(file.path)) }
        context.console.out(report(prefix: root.path, runtimeLibraries: runtime.count, environment: context.environment))
    }

    /// Where LICENSE and NOTICE go under the prefix.
    static let docFolder = "share/doc/hapsync"

    /// The files install writes rather than copies, by their path under the prefix: the manual
    /// page (naming `prefix` in its FILES, dated `date`) and each shell's completions.
    static func generatedFiles(prefix: String, date: String) -> [(path: String, text: String)] {
        [("share/man/man1/" + ManualPage.fileName, ManualPage.roff(prefix: prefix, date: date))]
            + ShellCompletions.Shell.allCases.map { ($0.installPath, $0.script()) }
    }

    /// The manual page's date: SOURCE_DATE_EPOCH's when set (a reproducible build's), else today's.
    static func pageDate(_ environment: [String: String]) -> String {
        ManualPage.date(secondsSince1970: environment["SOURCE_DATE_EPOCH"].flatMap { Int($0) } ?? Int(Date().timeIntervalSince1970))
    }

    /// Checks that `root` is a folder this user can write in, or one that can be created: an
    /// existing file, or a folder (its own or the nearest existing parent) this user cannot write,
    /// is an error naming it, before anything is copied.
    static func checkPrefix(_ root: URL) throws(CLIError) {
        let fm = FileManager.default
        var existing = root
        while !fm.fileExists(atPath: existing.path), existing.path != "/" { existing.deleteLastPathComponent() }
        var isDirectory: ObjCBool = false
        let what = existing.path == root.path ? "--prefix \(root.path)" : "cannot create --prefix \(root.path): \(existing.path)"
        guard fm.fileExists(atPath: existing.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .failure("\(what) is not a folder", hint: "give the folder to install under, e.g. --prefix ~/.local")
        }
        guard fm.isWritableFile(atPath: existing.path) else {
            throw .failure("\(what) is not writable by this user",
                           hint: "choose a prefix this user owns, e.g. --prefix ~/.local, or run as its owner")
        }
    }

    /// Writes one installed file, replacing what is there (the prefix is the installer's); a
    /// failure names the file.
    static func write(_ text: String, to url: URL) throws(CLIError) {
        do {
            try text.write(to: url, atomically: true, encoding: .utf8)
        } catch {
            throw .failure("cannot write \(url.path): \(error.localizedDescription)")
        }
    }

    /// What install prints at the end: what went where, a build line that works pasted into a
    /// shell, and for each of PATH, man and the three shells, either that it finds the files as
    /// things are or the line to add (from `environment`: PATH, HOME, XDG_DATA_HOME,
    /// XDG_DATA_DIRS, MANPATH, BASH_COMPLETION_USER_DIR).
    static func report(prefix root: String, runtimeLibraries: Int, environment: [String: String]) -> String {
        let bin = root + "/bin", share = root + "/share"
        let pkgconfig = ShellCompletions.shellQuoted(root + "/lib/pkgconfig")
        var out = """
            installed into \(root):
              bin/hapsync, lib/libhapsync.so, \(runtimeLibraries) Swift runtime libraries in lib/
              include/hapsync.h, include/hapsync.hpp, lib/pkgconfig/hapsync.pc
              share/man/man1/hapsync.1, completions for bash, zsh and fish under share/,
              LICENSE and NOTICE in share/doc/hapsync
            build with: cc game.c $(PKG_CONFIG_PATH=\(pkgconfig) pkg-config --cflags --libs hapsync) -o game

            """
        if root.contains(where: \.isWhitespace) {
            out += "note: pkg-config's flags name \(root), and $(...) splits them at its spaces:\n"
                + "  to build with them, install under a path without spaces\n"
        }
        func standard(_ path: Substring) -> String { URL(fileURLWithPath: String(path)).standardizedFileURL.path }
        func variable(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let onPath = (variable("PATH") ?? "").split(separator: ":").map(standard).contains(bin)
        out += "\n"
        if !onPath {
            out += """
                \(bin) is not on PATH. To run hapsync by name, add this line to ~/.profile
                (or your shell's startup file: ~/.bashrc, ~/.zshrc) and open a new shell:
                  export PATH="\(doubleQuotedContent(bin)):$PATH"
                (fish: fish_add_path \(ShellCompletions.shellQuoted(bin)))


                """
        }
        let home = variable("HOME").map { standard(Substring($0)) }
        func tilde(_ path: String) -> String {
            guard let home, path.hasPrefix(home + "/") else { return path }
            return "~" + path.dropFirst(home.count)
        }
        let once = onPath ? "" : " (once it is there)"
        // man-db (manpath(5)): without MANPATH, each PATH element's ../share/man is searched; a
        // MANPATH with an empty element (leading or trailing colon, or ::) adds that default.
        let manPath = variable("MANPATH") ?? ""
        if manPath.split(separator: ":").map(standard).contains(share + "/man") {
            out += "man: share/man/man1/hapsync.1 is on MANPATH\n"
        } else if manPath.isEmpty || manPath.hasPrefix(":") || manPath.hasSuffix(":") || manPath.contains("::") {
            out += "man: man-db finds share/man/man1/hapsync.1 through \(bin) on PATH\(once); no MANPATH needed\n"
        } else {
            out += "man: MANPATH is set, so man reads only it; add the folder to it:\n"
                + "  export MANPATH=\"\(doubleQuotedContent(share + "/man")):$MANPATH\"\n"
        }
        // bash-completion 2.x loads a command's completions on first use from
        // ${BASH_COMPLETION_USER_DIR:-${XDG_DATA_HOME:-~/.local/share}/bash-completion}/completions,
        // then from each of ${XDG_DATA_DIRS:-/usr/local/share:/usr/share}/bash-completion/completions.
        let dataHome = variable("XDG_DATA_HOME").map { standard(Substring($0)) } ?? home.map { $0 + "/.local/share" }
        let bashUser = variable("BASH_COMPLETION_USER_DIR").map { standard(Substring($0)) } ?? dataHome.map { $0 + "/bash-completion" }
        let dataDirs = variable("XDG_DATA_DIRS").map { $0.split(separator: ":").map(standard) }
        let bashFile = ShellCompletions.Shell.bash.installPath
        if bashUser == share + "/bash-completion" {
            out += "bash: bash-completion loads \(bashFile) from \(tilde(share)); nothing to set\n"
        } else if (dataDirs ?? ["/usr/local/share", "/usr/share"]).contains(share) {
            out += "bash: bash-completion loads \(bashFile) from \(share) (in XDG_DATA_DIRS); nothing to set\n"
        } else {
            out += "bash: bash-completion does not look in \(share); add to ~/.bashrc:\n"
                + "  source \(ShellCompletions.shellQuoted(root + "/" + bashFile))\n"
        }
        // zsh: only folders on fpath; Debian's default fpath has /usr/local/share/zsh/site-functions.
        let zshFile = ShellCompletions.Shell.zsh.installPath
        if root == "/usr/local" {
            out += "zsh: \(zshFile) is on zsh's default fpath; nothing to set\n"
        } else {
            out += "zsh: for \(zshFile), add to ~/.zshrc before compinit runs:\n"
                + "  fpath=(\(ShellCompletions.shellQuoted(root + "/share/zsh/site-functions")) $fpath)\n"
        }
        // fish: $XDG_DATA_HOME/fish/vendor_completions.d (default ~/.local/share), then each of
        // XDG_DATA_DIRS when it is set, else fish's own share folder (/usr/share on Debian); it
        // loads a command's completions only once the command is on PATH.
        let fishFile = ShellCompletions.Shell.fish.installPath
        if share == dataHome || (dataDirs ?? ["/usr/share"]).contains(share) {
            out += "fish: fish reads \(fishFile) from \(tilde(share))\(onPath ? "" : " once hapsync is on PATH"); nothing to set\n"
        } else {
            out += "fish: fish does not look in \(share); add to ~/.config/fish/config.fish:\n"
                + "  set -p fish_complete_path \(ShellCompletions.shellQuoted(root + "/share/fish/vendor_completions.d"))\n"
        }
        return out
    }

    /// `text` to write inside double quotes in sh: `\`, `"`, `$` and backquotes escaped.
    static func doubleQuotedContent(_ text: String) -> String {
        var out = ""
        for c in text {
            if "\\\"$`".contains(c) { out.append("\\") }
            out.append(c)
        }
        return out
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
