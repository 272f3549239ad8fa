import Foundation
import HapSyncTestSupport
import Testing
@testable import HapSyncCLI

/// The programs the reference tests check the generated files with (groff, mandoc, bash, zsh,
/// fish), found on PATH, and the completion calls made through each shell.
enum ReferenceTools {
    /// The program's path when it is on PATH.
    static func which(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Whether the program is on PATH (for `.enabled(if:)`).
    static func has(_ name: String) -> Bool { which(name) != nil }

    /// Runs `program` (a name on PATH or a path) with `args` to its end, in this process's
    /// environment with the variables of `environment` replaced and those of `unsetting` removed.
    static func run(_ program: String, _ args: [String], environment: [String: String] = [:], unsetting: [String] = []) throws -> Run {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program.hasPrefix("/") ? program : try #require(which(program), "\(program) is not on PATH"))
        p.arguments = args
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }.filter { !unsetting.contains($0.key) }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        // Standard output first: what these tools print on standard error (warnings) is far below
        // a pipe's capacity, so the program never blocks on it meanwhile.
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Run(status: p.terminationStatus, out: String(decoding: o, as: UTF8.self), err: String(decoding: e, as: UTF8.self))
    }

    /// The generated files written under a fresh folder as `hapsync install` lays them out
    /// (share/man/man1/hapsync.1, share/bash-completion/..., ...); the caller removes it.
    static func writeGenerated() throws -> TemporaryDirectory {
        let dir = try TemporaryDirectory("reference")
        for file in InstallCommand.generatedFiles(prefix: dir.path, date: "2025-01-31") {
            let url = dir.url.appendingPathComponent(file.path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(file.text.utf8).write(to: url)
        }
        return dir
    }

    /// What the bash script's completion function offers for `words` (the last one the word being
    /// completed, "" for a new one), as bash calls it: COMP_WORDS and COMP_CWORD set, COMPREPLY read.
    /// `setup` runs first (e.g. sourcing bash-completion).
    static func bashComplete(_ script: URL, _ words: [String], setup: String = "") throws -> [String] {
        let program = setup + """
            source "$1"; shift
            COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
            \(ShellCompletions.bashFunction)
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let r = try run("bash", ["--norc", "--noprofile", "-c", program, "bash", script.path] + words)
        #expect(r.status == 0 && r.err.isEmpty, "bash completion of \(words): \(r.err)")
        return r.out.split(separator: "\n").map(String.init)
    }

    /// What fish offers for `line` (`complete -C`), with the script sourced: the candidates
    /// without their descriptions.
    static func fishComplete(_ script: URL, _ line: String) throws -> [String] {
        let r = try run("fish", ["--no-config", "-c", "source $argv[1]; complete -C $argv[2]", script.path, line])
        #expect(r.status == 0 && r.err.isEmpty, "fish completion of '\(line)': \(r.err)")
        return r.out.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) }
    }

    /// What zsh's completion system offers for `line` with the script on fpath: an interactive
    /// `zsh -f` on a pseudo-terminal (zsh/zpty) with compinit, a TAB after the line, and every
    /// match that reaches `compadd` recorded until the completion's end (`comppostfuncs`).
    static func zshComplete(_ functions: URL, _ line: String) throws -> [String] {
        let dir = try TemporaryDirectory("zsh")
        defer { dir.remove() }
        let out = dir.file("matches").path
        let script = """
            zmodload zsh/zpty
            zpty z zsh -f -i
            zpty -w z "PROMPT=; fpath=(${(q)1} \\$fpath); autoload -U compinit; compinit -u -D"
            zpty -w z "zstyle ':completion:*' completer _complete; bindkey '^I' complete-word"
            zpty -w z 'compadd() {
              if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd "$@"; return; fi
              local -a hits; builtin compadd -A hits "$@"; local ret=$?
              (( $#hits )) && print -rl -- $hits >> '${(q)2}'
              return ret
            }'
            zpty -w z "comppostfuncs=(__done); __done() { print -r -- END-OF-MATCHES >> ${(q)2} }"
            zpty -n -w z "$3"$'\\t'
            for i in {1..200}; do
              [[ -f $2 ]] && grep -q END-OF-MATCHES $2 && break
              sleep 0.05
            done
            zpty -d z
            """
        let r = try run("zsh", ["-f", "-c", script, "zsh", functions.path, out, line], environment: ["HOME": dir.path])
        #expect(r.status == 0, "zsh completion of '\(line)': \(r.err)")
        let lines = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        #expect(lines.contains("END-OF-MATCHES"), "zsh completion of '\(line)' did not finish within 10 s")
        return lines.split(separator: "\n").map(String.init).filter { $0 != "END-OF-MATCHES" }
    }
}

/// The install layout of each generated file, from the prefix (`share/zsh/site-functions/_hapsync`).
extension ShellCompletions.Shell {
    /// The script written under `dir` by `ReferenceTools.writeGenerated`.
    func file(in dir: TemporaryDirectory) -> URL { dir.url.appendingPathComponent(installPath) }
}
