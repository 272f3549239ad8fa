import Foundation

/// The scheduling policy and real-time priority of the thread named `name` in process `pid`
/// (nil: this process), read from /proc (fields 41 and 40 of its stat line; policy 1 is
/// SCHED_FIFO); the first such thread, or nil if none runs.
public func threadScheduling(named name: String, inProcess pid: Int32? = nil) -> (policy: Int, priority: Int)? {
    let root = "/proc/\(pid.map(String.init) ?? "self")/task"
    guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: root) else { return nil }
    for task in tasks {
        guard let comm = try? String(contentsOfFile: "\(root)/\(task)/comm", encoding: .utf8),
              comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
              let stat = try? String(contentsOfFile: "\(root)/\(task)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { continue }
        // After "pid (comm)" the fields start at 3: state is field 3.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 38, let priority = Int(fields[37]), let policy = Int(fields[38]) else { return nil }
        return (policy, priority)
    }
    return nil
}
