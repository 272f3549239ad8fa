import Foundation
import HapSyncTestSupport
import Testing
@testable import HapSyncCLI

/// `hapsync install --prefix DIR`: the prefix it refuses and why, what it tells a user to add to
/// which startup file (and only when needed), and, with the built binary, the files it installs and
/// that each is found the way it says.
@Suite("hapsync install")
struct InstallCommandTests {
    @Test func aPrefixThatIsAFileIsRefusedNamingIt() throws {
        let dir = try TemporaryDirectory("install")
        defer { dir.remove() }
        let file = dir.file("not-a-folder")
        try Data("x".utf8).write(to: file)
        let r = hapsync("install", "--prefix", file.path)
        #expect(r.status == 1 && r.out.isEmpty)
        #expect(r.err == "error: --prefix \(file.path) is not a folder\nhint: give the folder to install under, e.g. --prefix ~/.local\n")
        let under = hapsync("install", "--prefix", file.path + "/sub/dir")
        #expect(under.status == 1)
        #expect(under.err == "error: cannot create --prefix \(file.path)/sub/dir: \(file.path) is not a folder\n"
            + "hint: give the folder to install under, e.g. --prefix ~/.local\n")
        #expect(hapsync("install").err.hasPrefix("error: install needs --prefix DIR\n"))
    }

    /// A folder this user cannot write: checked as an unprivileged user (root writes anywhere), by
    /// the built binary under setpriv when the tests run as root.
    @Test(.enabled(if: getuid() != 0 || FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
                   "as root, needs setpriv (util-linux) to check as an unprivileged user"))
    func aPrefixThisUserCannotWriteIsRefusedNamingIt() throws {
        let dir = try TemporaryDirectory("readonly")
        defer { dir.remove() }
        let locked = dir.file("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o555])
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: locked.path) }
        func install(_ prefix: String) throws -> Run {
            guard getuid() == 0 else { return hapsync("install", "--prefix", prefix) }
            return try ReferenceTools.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups",
                                                               try BinaryTests.binary().path, "install", "--prefix", prefix])
        }
        let r = try install(locked.path)
        #expect(r.status == 1)
        #expect(r.err == "error: --prefix \(locked.path) is not writable by this user\n"
            + "hint: choose a prefix this user owns, e.g. --prefix ~/.local, or run as its owner\n")
        let below = try install(locked.path + "/new")
        #expect(below.err.hasPrefix("error: cannot create --prefix \(locked.path)/new: \(locked.path) is not writable by this user\n"))
    }

    /// ~/.local for a user whose PATH lacks ~/.local/bin: the PATH line; man (man-db) then finds
    /// the page by itself, bash-completion and fish look in ~/.local/share already, zsh needs fpath.
    @Test func theReportForAUserPrefixSaysWhatToAddAndWhere() {
        let report = InstallCommand.report(prefix: "/home/ana/.local", runtimeLibraries: 9,
                                           environment: ["HOME": "/home/ana", "PATH": "/usr/bin:/bin"])
        #expect(report == """
            installed into /home/ana/.local:
              bin/hapsync, lib/libhapsync.so, 9 Swift runtime libraries in lib/
              include/hapsync.h, include/hapsync.hpp, lib/pkgconfig/hapsync.pc
              share/man/man1/hapsync.1, completions for bash, zsh and fish under share/,
              LICENSE and NOTICE in share/doc/hapsync
            build with: cc game.c $(PKG_CONFIG_PATH=/home/ana/.local/lib/pkgconfig pkg-config --cflags --libs hapsync) -o game

            /home/ana/.local/bin is not on PATH. To run hapsync by name, add this line to ~/.profile
            (or your shell's startup file: ~/.bashrc, ~/.zshrc) and open a new shell:
              export PATH="/home/ana/.local/bin:$PATH"
            (fish: fish_add_path /home/ana/.local/bin)

            man: man-db finds share/man/man1/hapsync.1 through /home/ana/.local/bin on PATH (once it is there); no MANPATH needed
            bash: bash-completion loads share/bash-completion/completions/hapsync from ~/.local/share; nothing to set
            zsh: for share/zsh/site-functions/_hapsync, add to ~/.zshrc before compinit runs:
              fpath=(/home/ana/.local/share/zsh/site-functions $fpath)
            fish: fish reads share/fish/vendor_completions.d/hapsync.fish from ~/.local/share once hapsync is on PATH; nothing to set

            """)
    }

    @Test func theReportFollowsTheEnvironment() {
        func report(_ prefix: String, _ environment: [String: String]) -> String {
            InstallCommand.report(prefix: prefix, runtimeLibraries: 9, environment: environment)
        }
        // On PATH already: no PATH advice, and man and fish find their files now.
        let onPath = report("/home/ana/.local", ["HOME": "/home/ana", "PATH": "/usr/bin:/home/ana/.local/bin/"])
        #expect(!onPath.contains("not on PATH") && onPath.contains("through /home/ana/.local/bin on PATH; no MANPATH needed\n"))
        #expect(onPath.contains("from ~/.local/share; nothing to set\nzsh"))
        #expect(onPath.hasSuffix("hapsync.fish from ~/.local/share; nothing to set\n"))
        // A MANPATH without an empty element replaces man-db's search path: the folder must join it.
        let manPath = report("/home/ana/.local", ["HOME": "/home/ana", "PATH": "/home/ana/.local/bin", "MANPATH": "/usr/share/man"])
        #expect(manPath.contains("man: MANPATH is set, so man reads only it; add the folder to it:\n"
            + "  export MANPATH=\"/home/ana/.local/share/man:$MANPATH\"\n"))
        let manPathDefault = report("/home/ana/.local", ["HOME": "/home/ana", "PATH": "/home/ana/.local/bin", "MANPATH": "/opt/man:"])
        #expect(manPathDefault.contains("no MANPATH needed"))
        // Another prefix: bash and fish need a line, unless XDG_DATA_DIRS names its share.
        let opt = report("/opt/hap sync", ["HOME": "/home/ana", "PATH": "/usr/bin"])
        #expect(opt.contains("build with: cc game.c $(PKG_CONFIG_PATH='/opt/hap sync/lib/pkgconfig' pkg-config --cflags --libs hapsync) -o game\n"
            + "note: pkg-config's flags name /opt/hap sync, and $(...) splits them at its spaces:\n"))
        #expect(opt.contains("  export PATH=\"/opt/hap sync/bin:$PATH\"\n"))
        #expect(opt.contains("bash: bash-completion does not look in /opt/hap sync/share; add to ~/.bashrc:\n"
            + "  source '/opt/hap sync/share/bash-completion/completions/hapsync'\n"))
        #expect(opt.contains("  set -p fish_complete_path '/opt/hap sync/share/fish/vendor_completions.d'\n"))
        let listed = report("/opt/hs", ["HOME": "/home/ana", "PATH": "/opt/hs/bin", "XDG_DATA_DIRS": "/opt/hs/share:/usr/share"])
        #expect(listed.contains("bash-completion loads share/bash-completion/completions/hapsync from /opt/hs/share (in XDG_DATA_DIRS); "
            + "nothing to set"))
        #expect(listed.contains("fish: fish reads share/fish/vendor_completions.d/hapsync.fish from /opt/hs/share; nothing to set"))
        // /usr/local: on bash-completion's default XDG_DATA_DIRS and zsh's default fpath; fish
        // reads /usr/local/share only when XDG_DATA_DIRS names it.
        let local = report("/usr/local", ["HOME": "/root", "PATH": "/usr/local/bin:/usr/bin"])
        #expect(local.contains("from /usr/local/share (in XDG_DATA_DIRS)") && local.contains("is on zsh's default fpath; nothing to set"))
        #expect(local.contains("  set -p fish_complete_path /usr/local/share/fish/vendor_completions.d\n"))
        #expect(InstallCommand.doubleQuotedContent("a\"b$c`d\\e") == "a\\\"b\\$c\\`d\\\\e")
        #expect(ShellCompletions.shellQuoted("it's") == "'it'\\''s'" && ShellCompletions.shellQuoted("/a-b/c_d.e") == "/a-b/c_d.e")
    }

    /// Whether `hapsync install` can run here: the built binary, the C library SwiftPM builds
    /// beside it (`swift build` builds every product), and patchelf.
    static let canInstall: Bool = {
        guard let binary = try? BinaryTests.binary() else { return false }
        let library = binary.deletingLastPathComponent().appendingPathComponent("libHapSyncCAPI.so")
        return FileManager.default.fileExists(atPath: library.path) && ReferenceTools.has("patchelf")
    }()

    /// The built binary installs into a fresh prefix: every generated file is there, the printed
    /// build line compiles and links a C program when pasted into sh, and man, bash-completion,
    /// zsh and fish each find their file as the report says, from ~/.local's layout.
    @Test(.enabled(if: canInstall, "needs the hapsync binary with libHapSyncCAPI.so beside it (swift build) and patchelf"))
    func theBinaryInstallsTheManualPageAndCompletionsWhereShellsFindThem() throws {
        let home = try TemporaryDirectory("home")
        defer { home.remove() }
        let prefix = home.url.appendingPathComponent(".local").path
        let r = try BinaryTests.run(["install", "--prefix", prefix], environment: ["HOME": home.path, "XDG_DATA_HOME": "", "XDG_DATA_DIRS": ""])
        #expect(r.status == 0 && r.err.isEmpty, "\(r.err)")
        let files = ["bin/hapsync", "lib/libhapsync.so", "include/hapsync.h", "include/hapsync.hpp", "lib/pkgconfig/hapsync.pc",
                     "share/man/man1/hapsync.1", "share/doc/hapsync/LICENSE", "share/doc/hapsync/NOTICE"]
            + ShellCompletions.Shell.allCases.map(\.installPath)
        for file in files { #expect(FileManager.default.fileExists(atPath: prefix + "/" + file), "\(file)") }
        let buildLine = "cc game.c $(PKG_CONFIG_PATH=\(prefix)/lib/pkgconfig pkg-config --cflags --libs hapsync) -o game"
        #expect(r.out.contains("\nbuild with: \(buildLine)\n"))
        #expect(r.out.contains("bash: bash-completion loads share/bash-completion/completions/hapsync from ~/.local/share; nothing to set\n"))
        let page = try String(contentsOfFile: prefix + "/share/man/man1/hapsync.1", encoding: .utf8)
        #expect(page.contains("\n.TP\n\(ManualPage.escape(prefix))/bin/hapsync\n"))

        if ReferenceTools.has("cc") && ReferenceTools.has("pkg-config") {
            try Data("#include <hapsync.h>\nint main(void) { return hs_version() == 0; }\n".utf8).write(to: home.file("game.c"))
            let built = try ReferenceTools.run("sh", ["-c", "cd \"$1\" && \(buildLine) && ./game", "sh", home.path])
            #expect(built.status == 0, "the printed build line, pasted: \(built.err)")
        }
        // man-db derives DIR/share/man from DIR/bin on PATH (manpath(5)); MANPATH unset.
        if ReferenceTools.has("man") {
            let man = try ReferenceTools.run("man", ["-w", "hapsync"], environment: ["PATH": "\(prefix)/bin:/usr/bin:/bin", "HOME": home.path],
                                          unsetting: ["MANPATH"])
            #expect(man.out == "\(prefix)/share/man/man1/hapsync.1\n", "man -w: \(man.out)\(man.err)")
        }
        // bash-completion's loader, with XDG_DATA_HOME unset: ~/.local/share/bash-completion/completions.
        if FileManager.default.fileExists(atPath: "/usr/share/bash-completion/bash_completion") {
            let load = "source /usr/share/bash-completion/bash_completion; __load_completion hapsync && complete -p hapsync"
            let bash = try ReferenceTools.run("bash", ["--norc", "--noprofile", "-c", load], environment: ["HOME": home.path],
                                              unsetting: ["XDG_DATA_HOME", "XDG_DATA_DIRS", "BASH_COMPLETION_USER_DIR"])
            #expect(bash.out == "complete -F \(ShellCompletions.bashFunction) hapsync\n", "\(bash.err)")
        }
        // fish, with XDG_DATA_HOME unset: ~/.local/share/fish/vendor_completions.d (fish loads a
        // command's completions once the command is on PATH).
        if ReferenceTools.has("fish") {
            let path = "\(prefix)/bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
            let fish = try ReferenceTools.run("fish", ["-c", "complete -C 'hapsync pl'"], environment: ["HOME": home.path, "PATH": path],
                                              unsetting: ["XDG_DATA_HOME", "XDG_DATA_DIRS", "XDG_CONFIG_HOME"])
            #expect(fish.out.split(separator: "\n").map { $0.prefix { $0 != "\t" } } == ["play", "plot"], "\(fish.out)\(fish.err)")
        }
        // zsh: with the folder on fpath, compinit registers _hapsync for hapsync (its #compdef line).
        if ReferenceTools.has("zsh") {
            let register = "fpath=(\(prefix)/share/zsh/site-functions $fpath); autoload -U compinit; compinit -u -D; print -r -- $_comps[hapsync]"
            let zsh = try ReferenceTools.run("zsh", ["-f", "-c", register],
                                             environment: ["HOME": home.path])
            #expect(zsh.out == "_hapsync\n", "\(zsh.err)")
        }
    }
}
