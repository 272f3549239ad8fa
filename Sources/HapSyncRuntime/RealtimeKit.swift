import CDBus
import Glibc
import HapSyncSystem

/// RealtimeKit (rtkit-daemon, org.freedesktop.RealtimeKit1 on the system bus): SCHED_FIFO for a
/// thread of this process when the process has no right to it itself (not root, no
/// RLIMIT_RTPRIO), the way PulseAudio's and PipeWire's clients get it on a desktop.
///
/// - RealtimeKit grants priorities up to its `MaxRealtimePriority` (20 by default), so HapSync's
///   priorities (80 and below) are moved down together: the engine's highest lands on the limit
///   and the others keep their distance below it (`priority(for:limit:)`).
/// - It grants only to a process whose RLIMIT_RTTIME (soft and hard) is at most its
///   `RTTimeUSecMax` (200 ms by default): set here before asking, and never raised. A real-time
///   thread that then runs that long without blocking gets SIGXCPU; HapSync's never do.
/// - Each call opens its own connection to the system bus and closes it, waits at most 1 s for
///   each reply, allocates and blocks: call it at a thread's start, never from its real-time loop.
public enum RealtimeKit {
    /// The highest priority HapSync asks for by default (the scheduler thread's): RealtimeKit's
    /// limit stands in for it.
    public static let anchor: Int32 = 80

    /// Why RealtimeKit did not grant it: no system bus, no rtkit-daemon, or its refusal, with
    /// the D-Bus error's name and message ("org.freedesktop.DBus.Error.AccessDenied: Operation
    /// not permitted").
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// What went wrong.
        public var description: String
    }

    /// What `asked` becomes under a limit of `limit`: unchanged when it fits; else moved down by
    /// `anchor − limit` (80 → the limit, 78 → two below it), at least 1 and at most `limit`.
    public static func priority(for asked: Int32, limit: Int32) -> Int32 {
        guard asked > limit else { return max(1, asked) }
        return min(limit, max(1, asked - max(0, anchor - limit)))
    }

    /// Asks RealtimeKit to run thread `tid` of this process at SCHED_FIFO, at `asked` moved under
    /// its limit; returns the priority granted. Blocks up to a second per reply.
    public static func makeRealtime(thread tid: Int32, asked: Int32) -> Result<Int32, Refusal> {
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let bus = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error) else {
            return .failure(Refusal(description: "no system bus (\(text(error)))"))
        }
        dbus_connection_set_exit_on_disconnect(bus, 0)
        defer { dbus_connection_close(bus); dbus_connection_unref(bus) }

        let limit: Int32, rttime: Int64
        switch (property(bus, "MaxRealtimePriority"), property(bus, "RTTimeUSecMax")) {
        case (.success(let l), .success(let r)): (limit, rttime) = (Int32(clamping: l), r)
        case (.failure(let e), _), (_, .failure(let e)): return .failure(e)
        }
        guard limit >= 1, rttime > 0 else { return .failure(Refusal(description: "rtkit-daemon grants no real-time priority (MaxRealtimePriority \(limit))")) }
        // RLIMIT_RTTIME at most what RealtimeKit allows, soft and hard (never raised; unlimited
        // is the largest value).
        var current = rlimit()
        getrlimit(__rlimit_resource_t(__RLIMIT_RTTIME.rawValue), &current)
        let allowed = rlim_t(rttime)
        if current.rlim_max > allowed || current.rlim_cur > allowed {
            var wanted = rlimit(rlim_cur: min(current.rlim_cur, allowed), rlim_max: min(current.rlim_max, allowed))
            if setrlimit(__rlimit_resource_t(__RLIMIT_RTTIME.rawValue), &wanted) != 0 {
                return .failure(Refusal(description: "cannot set RLIMIT_RTTIME to \(rttime) µs: \(SystemErrno(errno))"))
            }
        }
        let priority = Self.priority(for: asked, limit: limit)
        guard let call = dbus_message_new_method_call(service, path, service, "MakeThreadRealtime") else {
            return .failure(Refusal(description: "out of memory"))
        }
        defer { dbus_message_unref(call) }
        var args = DBusMessageIter()
        dbus_message_iter_init_append(call, &args)
        var thread = UInt64(tid), value = UInt32(priority)
        guard dbus_message_iter_append_basic(&args, type("t"), &thread) != 0,
              dbus_message_iter_append_basic(&args, type("u"), &value) != 0 else { return .failure(Refusal(description: "out of memory")) }
        guard let reply = dbus_connection_send_with_reply_and_block(bus, call, timeoutMilliseconds, &error) else {
            return .failure(Refusal(description: text(error)))
        }
        dbus_message_unref(reply)
        return .success(priority)
    }

    private static let service = "org.freedesktop.RealtimeKit1", path = "/org/freedesktop/RealtimeKit1"
    private static let timeoutMilliseconds: Int32 = 1000

    /// A D-Bus type code ("t": uint64).
    private static func type(_ code: Unicode.Scalar) -> Int32 { Int32(code.value) }

    /// "name: message" of a set error.
    private static func text(_ error: DBusError) -> String {
        let name = error.name.map { String(cString: $0) } ?? "unknown error"
        let message = error.message.map { String(cString: $0) } ?? ""
        return message.isEmpty ? name : "\(name): \(message)"
    }

    /// RealtimeKit's integer property `name` (an int32 or int64).
    private static func property(_ bus: OpaquePointer, _ name: String) -> Result<Int64, Refusal> {
        guard let call = dbus_message_new_method_call(service, path, "org.freedesktop.DBus.Properties", "Get") else {
            return .failure(Refusal(description: "out of memory"))
        }
        defer { dbus_message_unref(call) }
        var args = DBusMessageIter()
        dbus_message_iter_init_append(call, &args)
        let appended = service.withCString { s in name.withCString { n in
            var s = s, n = n
            return dbus_message_iter_append_basic(&args, type("s"), &s) != 0 && dbus_message_iter_append_basic(&args, type("s"), &n) != 0
        } }
        guard appended else { return .failure(Refusal(description: "out of memory")) }
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let reply = dbus_connection_send_with_reply_and_block(bus, call, timeoutMilliseconds, &error) else {
            return .failure(Refusal(description: text(error)))
        }
        defer { dbus_message_unref(reply) }
        var it = DBusMessageIter(), variant = DBusMessageIter()
        guard dbus_message_iter_init(reply, &it) != 0, dbus_message_iter_get_arg_type(&it) == type("v") else {
            return .failure(Refusal(description: "RealtimeKit's \(name) is not a variant"))
        }
        dbus_message_iter_recurse(&it, &variant)
        switch dbus_message_iter_get_arg_type(&variant) {
        case type("i"): var v: Int32 = 0; dbus_message_iter_get_basic(&variant, &v); return .success(Int64(v))
        case type("x"): var v: Int64 = 0; dbus_message_iter_get_basic(&variant, &v); return .success(v)
        default: return .failure(Refusal(description: "RealtimeKit's \(name) is not an integer"))
        }
    }
}
