/// Completion scripts for bash, zsh and fish, generated from the command table: the commands
/// with their summaries, each command's options with their help, the values of options that take
/// a fixed set of words (`--audio auto|pipewire|pulse|none`), file names where a file or folder is
/// expected (options whose placeholder says so, and positional FILE arguments), and nothing where
/// a value is free text (a number, a sink name). `hapsync install` writes them where each shell
/// looks under a prefix (`Shell.installPath`).
enum ShellCompletions {
    /// A shell with completions.
    enum Shell: String, CaseIterable, Sendable {
        /// bash, with or without the bash-completion package.
        case bash
        /// zsh's completion system (compinit).
        case zsh
        /// fish.
        case fish

        /// Where the script goes under a prefix, the place each shell's own lookup uses:
        /// bash-completion's `share/bash-completion/completions/NAME`, zsh's `site-functions/_NAME`
        /// (on zsh's fpath), fish's `vendor_completions.d/NAME.fish`.
        var installPath: String {
            switch self {
            case .bash: return "share/bash-completion/completions/hapsync"
            case .zsh: return "share/zsh/site-functions/_hapsync"
            case .fish: return "share/fish/vendor_completions.d/hapsync.fish"
            }
        }

        /// The script for this shell.
        func script(commands: [Command] = HapSyncCLI.commands) -> String {
            switch self {
            case .bash: return ShellCompletions.bash(commands: commands)
            case .zsh: return ShellCompletions.zsh(commands: commands)
            case .fish: return ShellCompletions.fish(commands: commands)
            }
        }
    }

    /// The bash function the script registers with `complete -F` (tests call it with COMP_WORDS).
    static let bashFunction = "_hapsync"

    /// The line each script starts with after its shell's own header.
    private static let generated = "generated from hapsync's command table (Sources/HapSyncCLI) by ShellCompletions; do not edit."

    /// Every option name of a command once, in help order (a command may list one in two groups).
    private static func entries(_ command: Command) -> [CLIReference.OptionEntry] {
        var seen: Set<String> = []
        return CLIReference.optionGroups(command).flatMap(\.entries).filter { seen.insert($0.longName).inserted }
    }

    // MARK: - bash

    /// The bash script: `_hapsync` completes the command, then the command's options, an option's
    /// value (choices, files, folders) and the command's file arguments. It uses bash-completion's
    /// `_filedir` for file names when that is loaded, and compgen otherwise; `--opt=value` is
    /// completed after the `=` too.
    static func bash(commands: [Command] = HapSyncCLI.commands) -> String {
        let names = commands.map(\.name) + ["help"]
        var out = """
            # bash completion for hapsync: \(generated)
            # Loaded by bash-completion from .../share/bash-completion/completions, or with: source THIS_FILE

            # File names for the word being completed: with -d folders only; with an extension,
            # the files that have it and folders; with nothing, all files.
            _hapsync_files() {
                if declare -F _filedir >/dev/null; then
                    _filedir "$@"
                    return
                fi
                compopt -o filenames 2>/dev/null
                local IFS=$'\\n'
                case $1 in
                -d) COMPREPLY=($(compgen -d -- "$cur")) ;;
                '') COMPREPLY=($(compgen -f -- "$cur")) ;;
                *) COMPREPLY=($(compgen -f -X "!*.$1" -- "$cur") $(compgen -d -- "$cur")) ;;
                esac
            }

            \(bashFunction)() {
                local cur=${COMP_WORDS[COMP_CWORD]} prev= command= ended= i
                COMPREPLY=()
                ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
                # bash splits --opt=value at the '=' (COMP_WORDBREAKS): complete the value of --opt.
                if [[ $cur == = ]]; then
                    cur=
                elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
                    prev=${COMP_WORDS[COMP_CWORD - 2]}
                fi
                for ((i = 1; i < COMP_CWORD; i++)); do
                    if [[ ${COMP_WORDS[i]} != -* ]]; then
                        command=${COMP_WORDS[i]}
                        break
                    fi
                done
                if [[ -z $command ]]; then
                    if [[ $cur == -* ]]; then
                        COMPREPLY=($(compgen -W '-h --help --version' -- "$cur"))
                    else
                        COMPREPLY=($(compgen -W '\(names.joined(separator: " "))' -- "$cur"))
                    fi
                    return 0
                fi
                for ((i = i + 1; i < COMP_CWORD; i++)); do
                    [[ ${COMP_WORDS[i]} == -- ]] && ended=1
                done
                case $command in
                help)
                    COMPREPLY=($(compgen -W '\(commands.map(\.name).joined(separator: " "))' -- "$cur"))
                    ;;

            """
        for command in commands {
            let options = entries(command)
            out += "    \(command.name))\n"
            out += "        if [[ -z $ended ]]; then\n"
            var cases: [(String, String)] = []
            for kind in Set(options.map(\.kind)).sorted(by: { bashValue($0) < bashValue($1) }) where kind != .flag {
                let takers = options.filter { $0.kind == kind }.flatMap(\.names)
                cases.append((takers.joined(separator: "|"), bashValue(kind)))
            }
            if !cases.isEmpty {
                out += "            case $prev in\n"
                for (pattern, action) in cases { out += "            \(pattern)) \(action); return 0 ;;\n" }
                out += "            esac\n"
            }
            let words = options.flatMap(\.names).sorted { ($0.hasPrefix("--") ? 1 : 0, $0) < ($1.hasPrefix("--") ? 1 : 0, $1) }
            out += "            if [[ $cur == -* ]]; then\n"
            out += "                COMPREPLY=($(compgen -W '\(words.joined(separator: " "))' -- \"$cur\"))\n"
            out += "                return 0\n"
            out += "            fi\n"
            out += "        fi\n"
            if let positional = CLIReference.positional(command), positional.kind != .text {
                out += "        \(bashValue(positional.kind))\n"
            }
            out += "        ;;\n"
        }
        out += """
                esac
                return 0
            }

            complete -F \(bashFunction) hapsync

            """
        return out
    }

    /// The bash command that completes a value of this kind.
    private static func bashValue(_ kind: CLIReference.ValueKind) -> String {
        switch kind {
        case .flag, .text: return "COMPREPLY=()"
        case .choices(let words): return "COMPREPLY=($(compgen -W '\(words.joined(separator: " "))' -- \"$cur\"))"
        case .file(let ext): return "_hapsync_files" + (ext.map { " \($0)" } ?? "")
        case .directory: return "_hapsync_files -d"
        }
    }

    // MARK: - zsh

    /// The zsh script: `_arguments` specifications, an option's help as its description, the
    /// commands with their summaries. Autoloaded from fpath as `_hapsync` (its `#compdef` line);
    /// sourced instead, it registers itself with compdef.
    static func zsh(commands: [Command] = HapSyncCLI.commands) -> String {
        var out = """
            #compdef hapsync
            # zsh completion for hapsync: \(generated)
            # On zsh's fpath as _hapsync, before compinit runs: fpath=(DIR/share/zsh/site-functions $fpath)

            _hapsync_commands() {
                local -a commands
                commands=(

            """
        for command in commands { out += "        " + zshQuoted(zshDescribeEscaped(command.name) + ":" + command.summary) + "\n" }
        out += """
                )
                _describe -t commands 'hapsync command' commands
            }

            _hapsync() {
                local curcontext=$curcontext state line ret=1
                typeset -A opt_args
                _arguments -C \\
                    '(- *)'{-h,--help}'[show help]' \\
                    '(- *)--version[print the version]' \\
                    '1: :_hapsync_commands' \\
                    '*:: :->command' && ret=0
                [[ $state == command ]] || return ret
                curcontext=${curcontext%:*:*}:hapsync-$words[1]:
                case $words[1] in
                help)
                    _arguments '1: :_hapsync_commands' && ret=0
                    ;;

            """
        for command in commands {
            out += "    \(command.name))\n"
            out += "        _arguments -S \\\n"
            for entry in entries(command) {
                out += "            " + zshSpec(entry) + " \\\n"
            }
            if let positional = CLIReference.positional(command) {
                let count = positional.several ? "*:" : positional.optional ? "::" : ":"
                out += "            " + zshQuoted(count + zshEscaped(positional.name) + ":" + zshAction(positional.kind)) + " \\\n"
            }
            out += "            && ret=0\n"
            out += "        ;;\n"
        }
        out += """
                esac
                return ret
            }

            if [[ $funcstack[1] == _hapsync ]]; then
                _hapsync "$@"
            else
                compdef _hapsync hapsync
            fi

            """
        return out
    }

    /// One option's `_arguments` specification: `-h/--help` exclusive of everything, a repeatable
    /// one with `*`, one with a value as `--name=` (the value in the next word or after `=`), its
    /// help in brackets, then its placeholder and what completes the value.
    private static func zshSpec(_ entry: CLIReference.OptionEntry) -> String {
        let description = "[" + zshDescriptionEscaped(entry.summary) + "]"
        if entry.names.count > 1 {
            return "'(- *)'{" + entry.names.joined(separator: ",") + "}" + zshQuoted(description)
        }
        var spec = (entry.isRepeatable ? "*" : "") + entry.names[0]
        if let value = entry.valueName {
            spec += "=" + description + ":" + zshEscaped(value) + ":" + zshAction(entry.kind)
        } else {
            spec += description
        }
        return zshQuoted(spec)
    }

    /// What completes a value of this kind in an `_arguments` specification.
    private static func zshAction(_ kind: CLIReference.ValueKind) -> String {
        switch kind {
        case .flag, .text: return " "
        case .choices(let words): return "(" + words.joined(separator: " ") + ")"
        case .file(let ext): return ext.map { "_files -g \"*.\($0)\"" } ?? "_files"
        case .directory: return "_files -/"
        }
    }

    /// Text in single quotes for zsh (a quote inside closes, escapes and reopens).
    private static func zshQuoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// A message or placeholder in a specification: colons and backslashes escaped.
    private static func zshEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ":", with: "\\:")
    }

    /// A description in brackets: backslashes and closing brackets escaped.
    private static func zshDescriptionEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "]", with: "\\]")
    }

    /// A name for `_describe` (`name:description`): colons in it escaped.
    private static func zshDescribeEscaped(_ text: String) -> String { text.replacingOccurrences(of: ":", with: "\\:") }

    // MARK: - fish

    /// The fish script: `complete` lines, file names off by default and on where a command takes
    /// files; each option's help as its description; choices as exclusive arguments.
    static func fish(commands: [Command] = HapSyncCLI.commands) -> String {
        var out = """
            # fish completion for hapsync: \(generated)
            # Found by fish in .../share/fish/vendor_completions.d when that share is XDG_DATA_HOME or in XDG_DATA_DIRS.

            # Whether the command being completed (the first word after hapsync that is not an option) is NAME.
            function __hapsync_using --argument-names name
                for word in (commandline -opc)[2..-1]
                    if not string match -q -- '-*' $word
                        test $word = $name
                        return
                    end
                end
                return 1
            end

            complete -c hapsync -f
            complete -c hapsync -n __fish_use_subcommand -s h -l help -d 'show help'
            complete -c hapsync -n __fish_use_subcommand -l version -d 'print the version'
            complete -c hapsync -n __fish_use_subcommand -a help -d 'show a command\\'s help'

            """
        for command in commands {
            out += "complete -c hapsync -n __fish_use_subcommand -a \(command.name) -d \(fishQuoted(command.summary))\n"
        }
        out += "complete -c hapsync -n '__hapsync_using help' -a \(fishQuoted(commands.map(\.name).joined(separator: " ")))\n"
        for command in commands {
            let condition = fishQuoted("__hapsync_using \(command.name)")
            out += "\n# hapsync \(command.name)\n"
            for entry in entries(command) {
                var line = "complete -c hapsync -n \(condition)"
                for name in entry.names { line += name.hasPrefix("--") ? " -l \(name.dropFirst(2))" : " -s \(name.dropFirst())" }
                // Choices on a line of their own, so that each is not shown with the option's description.
                if case .choices = entry.kind {
                    out += line + fishValue(entry.kind) + "\n" + line + " -x -d " + fishQuoted(entry.summary) + "\n"
                } else {
                    out += line + fishValue(entry.kind) + " -d " + fishQuoted(entry.summary) + "\n"
                }
            }
            if let positional = CLIReference.positional(command), positional.kind != .text {
                out += "complete -c hapsync -n \(condition)" + fishValue(positional.kind) + "\n"
            }
        }
        return out
    }

    /// The arguments of `complete` for a value of this kind.
    private static func fishValue(_ kind: CLIReference.ValueKind) -> String {
        switch kind {
        case .flag: return ""
        case .text: return " -x"
        case .choices(let words): return " -x -a " + fishQuoted(words.joined(separator: " "))
        case .file(let ext): return ext.map { " -x -a " + fishQuoted("(__fish_complete_suffix .\($0))") } ?? " -r -F"
        case .directory: return " -x -a " + fishQuoted("(__fish_complete_directories)")
        }
    }

    /// Text in fish's single quotes (backslashes and quotes escaped).
    private static func fishQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    // MARK: - Quoting for POSIX shells

    /// `text` as one word for sh, bash and zsh: as it is when it holds only characters no shell
    /// treats specially, else in single quotes (a quote inside closes, escapes and reopens).
    static func shellQuoted(_ text: String) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy {
            ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || "/._+-:,@%=".unicodeScalars.contains($0)
        }
        return plain ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
