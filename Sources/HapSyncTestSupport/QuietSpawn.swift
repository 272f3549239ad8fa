import Foundation
import Glibc
import HapSyncRuntime
import HapSyncSystem

/// Starts a sound server (or its tool) for a test: `arguments[0]` run with `environment`, its
/// standard output and error to /dev/null, with posix_spawn, not Foundation's `Process` (a
/// server that closes the descriptors it inherits reads to `Process` as the child's exit, and its
/// reaping thread then blocks in `waitpid` until the server ends). Returns the child's PID, by
/// which it is ended.
func spawnQuietly(_ arguments: [String], environment: [String: String]) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for p in argv + envp { free(p) } }
    var child: pid_t = 0
    let rc = posix_spawn(&child, arguments[0], &actions, nil, argv, envp)
    guard rc == 0 else {
        throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot start \(arguments[0]): \(SystemErrno(rc).message)"])
    }
    return child
}
