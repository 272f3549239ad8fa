import CHapSync
import HapSyncConcurrency

/// A failure on its way to C: a status and the message `hs_last_error_message` gives.
struct CFailure: Error {
    let status: hs_status
    let message: String

    static func null(_ name: String) -> CFailure { CFailure(status: HS_ERROR_NULL_ARGUMENT, message: "\(name) is NULL") }
    static func invalid(_ message: String) -> CFailure { CFailure(status: HS_ERROR_INVALID_ARGUMENT, message: message) }
}

/// Runs a C entry point's body: HS_OK, or the failure's status with its message stored for
/// `hs_last_error_message`. Nothing thrown crosses into C.
func cCall(_ body: () throws(CFailure) -> Void) -> hs_status {
    do {
        try body()
        return HS_OK
    } catch {
        hs_internal_set_error(error.message)
        return error.status
    }
}

/// The live handles, each with its kind: a pointer not in here (destroyed, never made, of
/// another kind) is refused, never dereferenced.
public enum Handles {
    private static let live = Locked<[UnsafeMutableRawPointer: ObjectIdentifier]>([:])

    /// A new handle for `object` (retained until `destroy`).
    static func make<T: AnyObject>(_ object: T) -> OpaquePointer {
        let p = Unmanaged.passRetained(object).toOpaque()
        live.withLock { $0[p] = ObjectIdentifier(T.self) }
        return OpaquePointer(p)
    }

    /// The object behind a live handle of kind T (held strongly by the caller from here on).
    static func get<T: AnyObject>(_ handle: OpaquePointer?, _ name: String, as: T.Type = T.self) throws(CFailure) -> T {
        guard let handle else { throw .null(name) }
        let p = UnsafeMutableRawPointer(handle)
        let object: T? = live.withLock { live in
            // Taken under the lock, so a destroy on another thread cannot release it in between.
            live[p] == ObjectIdentifier(T.self) ? Unmanaged<T>.fromOpaque(p).takeUnretainedValue() : nil
        }
        guard let object else {
            throw CFailure(status: HS_ERROR_BAD_HANDLE, message: "\(name) is not a live \(String(describing: T.self).replacingOccurrences(of: "Box", with: "").lowercased()) handle (destroyed, or not made by libhapsync)")
        }
        return object
    }

    /// Ends a handle; nil when it was not a live one of kind T (then nothing happens).
    @discardableResult
    static func destroy<T: AnyObject>(_ handle: OpaquePointer?, as: T.Type) -> T? {
        guard let handle else { return nil }
        let p = UnsafeMutableRawPointer(handle)
        let known = live.withLock { live -> Bool in
            guard live[p] == ObjectIdentifier(T.self) else { return false }
            live[p] = nil
            return true
        }
        return known ? Unmanaged<T>.fromOpaque(p).takeRetainedValue() : nil
    }
}

/// A C string argument, required.
func cString(_ p: UnsafePointer<CChar>?, _ name: String) throws(CFailure) -> String {
    guard let p else { throw .null(name) }
    return String(cString: p)
}

extension Handles {
    /// Ends a handle made by `hsEngineHandle(wrapping:)` without stopping its engine (the
    /// caller owns it); true when it was live.
    public static func release(_ handle: OpaquePointer) -> Bool {
        destroy(handle, as: EngineBox.self) != nil
    }
}
