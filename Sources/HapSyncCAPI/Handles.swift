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

/// The live handles. A handle is a number, never an address, and never given out twice: a
/// destroyed handle (or one never made, or of another kind) is refused, even after its
/// memory has been reused for a new object.
public enum Handles {
    private struct Entry {
        let object: AnyObject
        let kind: ObjectIdentifier
    }

    private static let live = Locked<(entries: [UInt: Entry], next: UInt)>(([:], 0x10_000))

    /// A new handle for `object` (kept until `destroy`).
    static func make<T: AnyObject>(_ object: T) -> OpaquePointer {
        let id = live.withLock { state -> UInt in
            // Multiples of 16 from 64 Ki up: never NULL, never a small integer mistaken for one.
            let id = state.next
            state.next += 16
            state.entries[id] = Entry(object: object, kind: ObjectIdentifier(T.self))
            return id
        }
        return OpaquePointer(bitPattern: id)!
    }

    /// The object behind a live handle of kind T.
    static func get<T: AnyObject>(_ handle: OpaquePointer?, _ name: String, as: T.Type = T.self) throws(CFailure) -> T {
        guard let handle else { throw .null(name) }
        let id = UInt(bitPattern: handle)
        let object = live.withLock { state -> T? in
            guard let entry = state.entries[id], entry.kind == ObjectIdentifier(T.self) else { return nil }
            return entry.object as? T
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
        let id = UInt(bitPattern: handle)
        return live.withLock { state -> T? in
            guard let entry = state.entries[id], entry.kind == ObjectIdentifier(T.self) else { return nil }
            state.entries[id] = nil
            return entry.object as? T
        }
    }

    /// Ends a handle made by `hsEngineHandle(wrapping:)` without stopping its engine (the
    /// caller owns it); true when it was live.
    public static func release(_ handle: OpaquePointer) -> Bool {
        destroy(handle, as: EngineBox.self) != nil
    }
}

/// A C string argument, required.
func cString(_ p: UnsafePointer<CChar>?, _ name: String) throws(CFailure) -> String {
    guard let p else { throw .null(name) }
    return String(cString: p)
}
