import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncHapticOutput
import HapSyncOutputs

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
            hid-nintendo, hid-microsoft, xpad; none for uinput devices), and a line on how
            that driver plays rumble and how HapSync plays it there (a Switch Pro Controller:
            the level on both grips, at the driver's own pace).

            A device that another program has grabbed (EVIOCGRAB) accepts effects but the
            kernel drops them silently: close that program if a pad listed here stays still.

            Then, when a sound server answers, its sinks, for voice-coil actuators driven as
            audio ('--haptics waveform:SINK[:CHANNELS]'): a DualSense shows as a four-channel
            USB sink, known by the USB ids the server gives for it (the name when it gives
            none). Each DualSense (or DualSense Edge) gets a line pairing its event node with
            its sink, the two found on one USB device in /sys ("DualSense: /dev/input/event5 +
            sink NAME (rear channels)"), or saying why one has no partner (a pad on
            Bluetooth has no sink); and the sink 'waveform:auto' plays on.

            --json prints one object: "devices" (path, name, rumble, effects, usable, problem,
            bus, vendorProduct, model, driver, rumbleNote: how the driver plays rumble),
            "auto" (the path evdev:auto plays on, or null), "sinks" (name, description,
            channels, dualsense, haptics: the output to give, model, vendorProduct, bus,
            card, pad: the paired event node or null), null with "sinksProblem" when no
            sound server answers, "pairs" (model, pad, sink, haptics, usbDevice, note; null
            where one is missing), and "waveformAuto" (the sink waveform:auto plays on, or
            null with "waveformAutoProblem" saying why).
            """,
        groups: [OptionGroup([CommonOptions.json])], positionals: .none, run: { parsed, context throws(CLIError) in
            list(json: parsed[CommonOptions.json], console: context.console)
        })

    /// Prints the devices `system` finds and the sound server's sinks (`sinks`: nil asks the
    /// server), the DualSenses among them paired through `sysfs`, as tables or one JSON object.
    static func list(json: Bool, console: HapSyncCLI.Console, system: EvdevSystem = LinuxEvdevSystem(),
                     sinks: Result<[WaveformOutput.Sink], any Error>? = nil, sysfs: SysfsReading = SysfsTree()) {
        let devices = InputDeviceProbe.list(system: system)
        let sinks = sinks ?? Result { try WaveformOutput.sinks(server: nil) }
        let auto = InputDeviceProbe.firstRumbleDevice(in: devices)
        let pairs = DualSensePairing.pairs(devices: devices, sinks: try? sinks.get(), sysfs: sysfs)
        let waveformAuto = Result { () throws(WaveformAutoSink.Failure) in
            try WaveformAutoSink.choose(sinks: sinks, devices: devices, rumblePad: nil, channels: nil, sysfs: sysfs)
        }
        if json {
            console.out(JSONWriter.string(jsonObject(devices: devices, auto: auto, sinks: sinks, pairs: pairs, waveformAuto: waveformAuto)) + "\n")
            return
        }
        guard !devices.isEmpty else {
            console.out("no input devices: /dev/input has no event nodes (no gamepad plugged in, or no evdev driver loaded)\n")
            listSinks(sinks, console: console)
            listPairs(pairs, waveformAuto: waveformAuto, serverAnswered: (try? sinks.get()) != nil, console: console)
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
        if let auto {
            console.out("\nevdev:auto plays on \(auto.path) (\(auto.name))\n")
        } else {
            console.out("\nno device here can rumble for this user; evdev:auto has nothing to play on\n")
        }
        listSinks(sinks, console: console)
        listPairs(pairs, waveformAuto: waveformAuto, serverAnswered: (try? sinks.get()) != nil, console: console)
    }

    /// The `--json` object: the devices, evdev:auto's choice, the sinks, the pairs and
    /// waveform:auto's choice.
    private static func jsonObject(devices: [InputDeviceInfo], auto: InputDeviceInfo?, sinks: Result<[WaveformOutput.Sink], any Error>,
                                   pairs: [DualSensePair], waveformAuto: Result<WaveformAutoSink.Choice, WaveformAutoSink.Failure>) -> JSONValue {
        func text(_ value: String?) -> JSONValue { value.map { .string($0) } ?? JSONValue(.null) }
        var fields: [(String, JSONValue)] = [
            ("devices", .array(devices.map { d in
                .object([("path", .string(d.path)), ("name", .string(d.name)), ("rumble", .bool(d.hasRumble)),
                         ("effects", .integer(d.effectSlots)), ("usable", .bool(d.hasRumble && d.openProblem == nil && d.effectSlots > 0)),
                         ("problem", text(d.openProblem)), ("bus", text(d.id?.busName)), ("vendorProduct", text(d.id?.vendorProduct)),
                         ("model", text(d.model?.name)), ("driver", text(d.driver)),
                         ("rumbleNote", text(d.hasRumble ? PadRumble.of(driver: d.driver).note.nilIfEmpty : nil))])
            })),
            ("auto", text(auto?.path)),
        ]
        switch sinks {
        case .success(let list):
            fields.append(("sinks", .array(list.map { sink in
                let pad = pairs.first { $0.sink == sink }?.pad
                return .object([("name", .string(sink.name)), ("description", .string(sink.description)),
                                ("channels", .integer(sink.channels)), ("dualsense", .bool(sink.isDualSense)),
                                ("haptics", .string(sink.suggested)), ("model", text((sink.actuatorModel ?? sink.model)?.name)),
                                ("vendorProduct", text(sink.vendorProduct)), ("bus", text(sink.bus)),
                                ("card", sink.alsaCard.map { .integer($0) } ?? JSONValue(.null)), ("pad", text(pad?.path))])
            })))
        case .failure(let error):
            fields.append(("sinks", JSONValue(.null)))
            fields.append(("sinksProblem", .string("no sound server answers (\(error))")))
        }
        fields.append(("pairs", .array(pairs.map { pair in
            .object([("model", .string(pair.model.name)), ("pad", text(pair.pad?.path)), ("sink", text(pair.sink?.name)),
                     ("haptics", text(pair.sink?.suggested)), ("usbDevice", text(pair.usbDevice)), ("note", text(pair.note))])
        })))
        switch waveformAuto {
        case .success(let choice):
            fields.append(("waveformAuto", .string(choice.sink.name)))
        case .failure(let failure):
            fields.append(("waveformAuto", JSONValue(.null)))
            fields.append(("waveformAutoProblem", .string(failure.description)))
        }
        return .object(fields)
    }

    /// One line naming a pad's model and the kernel driver that serves it: "/dev/input/event5:
    /// DualSense (054c:0ce6, USB), driver hid-playstation". A known model under another driver
    /// says which it expected (hid-generic gives no rumble). A rumble pad whose driver HapSync
    /// knows gets a second line, "  rumble: ...", saying how the driver plays it and how HapSync
    /// plays it there (`PadRumble`).
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
        // How its driver plays rumble, where HapSync knows it (PadRumble), on a line of its own.
        let rumble = PadRumble.of(driver: d.driver)
        if d.hasRumble, !rumble.note.isEmpty { line += "\n  rumble: " + rumble.note }
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
            let kind = sink.actuatorModel.map { "a \($0.name): \(sink.suggested)" }
                ?? (sink.channels >= 4 ? "4+ channels: \(sink.suggested)" : "\(sink.suggested) (a shaker, say)")
            console.out(String(sink.name.prefix(width)).padding(toLength: width + 2, withPad: " ", startingAt: 0)
                        + String(sink.channels).padding(toLength: 10, withPad: " ", startingAt: 0) + kind + "\n")
        }
    }

    /// A line for each DualSense, its event node and its sink paired ("DualSense: /dev/input/event5
    /// + sink NAME (rear channels)") or why one is alone; then the sink `waveform:auto` plays on,
    /// or why it has none (only said when there is a DualSense or a sound server to look on).
    static func listPairs(_ pairs: [DualSensePair], waveformAuto: Result<WaveformAutoSink.Choice, WaveformAutoSink.Failure>,
                          serverAnswered: Bool, console: HapSyncCLI.Console) {
        if !pairs.isEmpty { console.out("\n") }
        for pair in pairs { console.out(line(pair) + "\n") }
        switch waveformAuto {
        case .success(let choice):
            console.out("\nwaveform:auto plays on \(choice.sink.name) (\(choice.reason))\n")
        case .failure where !serverAnswered:
            break
        case .failure(let failure) where !pairs.isEmpty:
            console.out("\nwaveform:auto has nothing to play on: \(failure)\n")
        case .failure:
            console.out("\nno DualSense sink here; waveform:auto has nothing to play on\n")
        }
    }

    /// One pair's line: "DualSense: /dev/input/event5 + sink NAME (rear channels)", "DualSense:
    /// /dev/input/event9, no sink: on Bluetooth ...", "DualSense Edge: sink NAME (rear
    /// channels), no evdev node: ...".
    static func line(_ pair: DualSensePair) -> String {
        func channels(_ sink: WaveformOutput.Sink) -> String {
            sink.channels >= 4 ? "rear channels" : "\(sink.channels) channels: no rear ones until its card's 4-channel profile is chosen"
        }
        switch (pair.pad, pair.sink) {
        case (let pad?, let sink?):
            return "\(pair.model.name): \(pad.path) + sink \(sink.name) (\(channels(sink)))"
        case (let pad?, nil):
            return "\(pair.model.name): \(pad.path), no sink: \(pair.note ?? "none found")"
        case (nil, let sink?):
            return "\(pair.model.name): sink \(sink.name) (\(channels(sink))), no evdev node: \(pair.note ?? "none found")"
        case (nil, nil):
            return "\(pair.model.name): \(pair.note ?? "neither its event node nor its sink found")"
        }
    }
}

extension String {
    /// nil for "", else the string.
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
