import Foundation

/// What `/hapsync/live` drives: haptics from whatever applications play into a live sink
/// (`hapsync serve`'s, made by the command line, which knows the sound server). `turnOn` and
/// `turnOff` come one at a time on a queue of their own (`OSCCommands`' live changes) and may
/// block while the sound server answers (a sink made or removed); the other calls come on the
/// service's thread meanwhile and must not wait for them. A refusal is an error whose message
/// the client gets, naming what failed.
public protocol LiveControl: AnyObject, Sendable {
    /// Makes the live sink and starts feeling what plays into it; says what it set up (sink,
    /// where the sound plays on, how far behind; a leftover taken over). Already on: says so.
    func turnOn() throws(OSCCommands.CommandError) -> String
    /// Stops, the live sink removed and what played into it moved back; a summary of the run
    /// (transients, lag, underruns), or nil when it was off.
    func turnOff() -> String?
    /// Sets the profile's gain (how loud hits feel) from the next onset on; returns it.
    func setGain(_ gain: Double) throws(OSCCommands.CommandError) -> Double
    /// Takes the built-in profile `name` (`dualsense`, `rumble`, `shaker`) or, when `file` is
    /// given, the profile file the client named `name` (already resolved and confined to the
    /// resource folders); returns the profile's name.
    func setProfile(named name: String, file: URL?) throws(OSCCommands.CommandError) -> String
    /// Takes the style `name` (`transients`, `percussive`, `balanced`, `ambient`: what
    /// `hapsync live --style` takes) from the next onset and level on; returns it.
    func setStyle(_ name: String) throws(OSCCommands.CommandError) -> String
    /// Key, value pairs for `/hapsync/status`: whether it is on, and its counts.
    var status: [(key: String, value: OSCValue)] { get }
}
