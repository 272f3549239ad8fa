import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncHapticOutput

/// `hapsync devices`: the input devices, and which can rumble for HapSync.
enum DevicesCommand {
    static let command = Command(
        name: "devices", summary: "list input devices: name, rumble capability, effect slots, access",
        about: """
            Lists /dev/input/event* with each device's name, whether it has FF_RUMBLE, how
            many force-feedback effects it holds, and whether this user can open it
            read-write (which playing rumble needs). Use a listed path with
            'hapsync play FILE --haptics evdev:PATH', or 'evdev:auto' for the first usable
            rumble device. Each pad is then named by model (DualSense, DualSense Edge,
            DualShock 4, Switch Pro Controller, Xbox controllers) from its vendor and product
            ids, with its bus and the kernel driver that serves it (hid-playstation, hid-sony,
            hid-nintendo, hid-microsoft, xpad; none for uinput devices).

            A device that another program has grabbed (EVIOCGRAB) accepts effects but the
            kernel drops them silently: close that program if a pad listed here stays still.

            Then, when a sound server answers, its sinks, for voice-coil actuators driven as
            audio ('--haptics waveform:SINK[:CHANNELS]'): a DualSense shows as a four-channel
            USB sink.

            --json prints one object: "devices" (path, name, rumble, effects, usable, problem,
            bus, vendorProduct, model, driver),
            "auto" (the path evdev:auto plays on, or null), and "sinks" (name, description,
            channels, dualsense, haptics: the output to give), null with "sinksProblem" when no
            sound server answers.
            """,
        groups: [OptionGroup([CommonOptions.json])], positionals: .none, run: { parsed, context throws(CLIError) in
            list(json: parsed[CommonOptions.json], console: context.console)
        })

    /// Prints the devices `system` finds and the sound server's sinks (`sinks`: nil asks the
    /// server), as tables or one JSON object.
    static func list(json: Bool, console: HapSyncCLI.Console, system: EvdevSystem = LinuxEvdevSystem(),
                     sinks: Result<[WaveformOutput.Sink], any Error>? = nil) {
        let devices = InputDeviceProbe.list(system: system)
        let sinks = sinks ?? Result { try WaveformOutput.sinks(server: nil) }
        if json {
            let auto = devices.first { $0.hasRumble && $0.openProblem == nil && $0.effectSlots > 0 }
            var fields: [(String, JSONValue)] = [
                ("devices", .array(devices.map { d in
                    .object([("path", .string(d.path)), ("name", .string(d.name)), ("rumble", .bool(d.hasRumble)),
                             ("effects", .integer(d.effectSlots)), ("usable", .bool(d.hasRumble && d.openProblem == nil && d.effectSlots > 0)),
                             ("problem", d.openProblem.map { .string($0) } ?? JSONValue(.null)),
                             ("bus", d.id.map { .string($0.busName) } ?? JSONValue(.null)),
                             ("vendorProduct", d.id.map { .string($0.vendorProduct) } ?? JSONValue(.null)),
                             ("model", d.model.map { .string($0.name) } ?? JSONValue(.null)),
                             ("driver", d.driver.map { .string($0) } ?? JSONValue(.null))])
                })),
                ("auto", auto.map { .string($0.path) } ?? JSONValue(.null)),
            ]
            switch sinks {
            case .success(let list):
                fields.append(("sinks", .array(list.map { sink in
                    .object([("name", .string(sink.name)), ("description", .string(sink.description)),
                             ("channels", .integer(sink.channels)), ("dualsense", .bool(sink.isDualSense)),
                             ("haptics", .string(sink.suggested))])
                })))
            case .failure(let error):
                fields.append(("sinks", JSONValue(.null)))
                fields.append(("sinksProblem", .string("no sound server answers (\(error))")))
            }
            console.out(JSONWriter.string(.object(fields)) + "\n")
            return
        }
        guard !devices.isEmpty else {
            console.out("no input devices: /dev/input has no event nodes (no gamepad plugged in, or no evdev driver loaded)\n")
            listSinks(sinks, console: console)
            return
        }
        let nameWidth = min(40, max(4, devices.map(\.name.count).max() ?? 4))
        console.out("DEVICE".padding(toLength: 20, withPad: " ", startingAt: 0) + "NAME".padding(toLength: nameWidth + 2, withPad: " ", startingAt: 0)
                    + "RUMBLE  EFFECTS  OPENS\n")
        for d in devices {
            let opens = d.openProblem == nil ? "yes" : "no"
            console.out(d.path.padding(toLength: 20, withPad: " ", startingAt: 0) + String(d.name.prefix(nameWidth)).padding(toLength: nameWidth + 2, withPad: " ", startingAt: 0)
                        + (d.hasRumble ? "yes" : "no").padding(toLength: 8, withPad: " ", startingAt: 0)
                        + String(d.effectSlots).padding(toLength: 9, withPad: " ", startingAt: 0) + opens + "\n")
        }
        for d in devices where d.hasRumble || d.model != nil {
            console.out("\n" + identity(d))
        }
        for d in devices where d.hasRumble {
            if let problem = d.openProblem { console.out("\n\(problem)\n") }
        }
        if let first = devices.first(where: { $0.hasRumble && $0.openProblem == nil && $0.effectSlots > 0 }) {
            console.out("\nevdev:auto plays on \(first.path) (\(first.name))\n")
        } else {
            console.out("\nno device here can rumble for this user; evdev:auto has nothing to play on\n")
        }
        listSinks(sinks, console: console)
    }

    /// One line naming a pad's model and the kernel driver that serves it: "/dev/input/event5:
    /// DualSense (054c:0ce6, USB), driver hid-playstation". A known model under another driver
    /// says which it expected (hid-generic gives no rumble).
    static func identity(_ d: InputDeviceInfo) -> String {
        var line = d.path + ": "
        if let model = d.model, let id = d.id {
            line += "\(model.name) (\(id.vendorProduct), \(id.busName))"
        } else if let id = d.id {
            line += "\(id.vendorProduct), \(id.busName), a model HapSync does not know"
        } else {
            line += "ids not readable"
        }
        if let driver = d.driver {
            line += ", driver " + driver
            if let expected = d.model?.driver, expected != driver { line += " (\(expected) is the one with rumble for it)" }
        } else {
            line += ", no kernel driver of its own (uinput or virtual)"
        }
        return line + "\n"
    }

    /// The sound server's sinks, for waveform haptics; a line saying why when no server answers.
    static func listSinks(_ found: Result<[WaveformOutput.Sink], any Error>, console: HapSyncCLI.Console) {
        guard case .success(let sinks) = found else {
            console.out("\nno sound server answers: audio sinks for waveform haptics not listed\n")
            return
        }
        let width = min(60, max(4, sinks.map(\.name.count).max() ?? 4))
        console.out("\n" + "SINK".padding(toLength: width + 2, withPad: " ", startingAt: 0) + "CHANNELS  HAPTICS\n")
        for sink in sinks {
            let kind = sink.isDualSense ? "a DualSense: \(sink.suggested)" : sink.channels >= 4 ? "4+ channels: \(sink.suggested)" : "\(sink.suggested) (a shaker, say)"
            console.out(String(sink.name.prefix(width)).padding(toLength: width + 2, withPad: " ", startingAt: 0)
                        + String(sink.channels).padding(toLength: 10, withPad: " ", startingAt: 0) + kind + "\n")
        }
    }
}
