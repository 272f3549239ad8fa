import Foundation
import HapSyncTestSupport
import Testing
@testable import HapSyncCLI

/// The manual page: valid man(7) for groff and mandoc (each checked when installed: Debian's
/// groff-base and mandoc packages), escaped so that what it shows copies back as typed.
@Suite("hapsync(1) manual page")
struct ManualPageTests {
    static let page = ManualPage.roff(prefix: "/opt/hap sync", date: "2025-01-31")

    /// Writes the page to a file for the formatters.
    static func pageFile() throws -> (TemporaryDirectory, URL) {
        let dir = try TemporaryDirectory("man")
        let url = dir.file(ManualPage.fileName)
        try Data(page.utf8).write(to: url)
        return (dir, url)
    }

    @Test(.enabled(if: ReferenceTools.has("groff"), "groff is not installed (Debian: groff-base)"))
    func groffFormatsItWithoutAWarning() throws {
        let (dir, url) = try Self.pageFile()
        defer { dir.remove() }
        let lint = try ReferenceTools.run("groff", ["-man", "-Tutf8", "-ww", "-z", url.path])
        #expect(lint.status == 0 && lint.err.isEmpty, "\(lint.err)")
        // What a reader sees: hyphens as ASCII hyphens (options copy as typed), other characters as themselves.
        let shown = try ReferenceTools.run("groff", ["-man", "-Tutf8", "-P-c", "-P-b", "-P-u", "-rLL=200n", url.path])
        #expect(shown.status == 0)
        for text in ["hapsync validate [--json] [--strict] [--resources DIR]... FILE...", "--latency-ms N", "HAPSYNC_INTENSITY_SCALE=X",
                     "ω₀ = 2π/response",
                     "cc game.c $(PKG_CONFIG_PATH='/opt/hap sync/lib/pkgconfig' pkg-config --cflags --libs hapsync) -o game"] {
            #expect(shown.out.contains(text), "groff's rendering lacks \(text)")
        }
        #expect(!shown.out.contains("\\"), "an escape was not understood: \(shown.out.split(separator: "\n").filter { $0.contains("\\") })")
    }

    @Test(.enabled(if: ReferenceTools.has("mandoc"), "mandoc is not installed (Debian: mandoc)"))
    func mandocFindsNothingToWarnAbout() throws {
        let (dir, url) = try Self.pageFile()
        defer { dir.remove() }
        let lint = try ReferenceTools.run("mandoc", ["-Tlint", "-Wwarning", url.path])
        #expect(lint.status == 0 && lint.out.isEmpty && lint.err.isEmpty, "\(lint.out)\(lint.err)")
    }

    @Test func sectionsAreThoseOfAManualPage() {
        var sections: [String] = []
        for line in Self.page.split(separator: "\n") where line.hasPrefix(".SH ") { sections.append(String(line.dropFirst(4))) }
        #expect(sections == ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS", "\"EXIT STATUS\"", "ENVIRONMENT", "FILES", "\"SEE ALSO\""])
        #expect(Self.page.hasPrefix(".\\\" hapsync(1), generated"))
        #expect(Self.page.contains("\n.TH HAPSYNC 1 2025-01-31 \"hapsync \(HapSyncCLI.version)\""))
        for variable in CLIReference.environment { #expect(Self.page.contains(".TP\n\\fB\(ManualPage.escape(variable.name))\\fR=")) }
        for status in CLIReference.exitStatuses { #expect(Self.page.contains(".TP\n.B \"\(status.status)\"\n")) }
    }

    /// Backslashes, hyphens, quotes, characters beyond ASCII and a leading dot, as roff needs them.
    @Test func textIsEscapedForRoff() {
        #expect(ManualPage.escape("a\\b --opt it's `x`") == "a\\eb \\-\\-opt it\\(aqs \\(gax\\(ga")
        #expect(ManualPage.escape("ω₀ −") == "\\[u03C9]\\[u2080] \\[u2212]")
        #expect(ManualPage.escape(".ahap files") == "\\&.ahap files")
        #expect(ManualPage.escape("'quoted'") == "\\(aqquoted\\(aq")
        // Refilled lines never start with a dot either, and stay within 80 bytes.
        let words = Array(repeating: "word", count: 16).joined(separator: " ")
        #expect(ManualPage.fill(words + " .ahap and more") == words + "\n\\&.ahap and more\n")
        #expect(ManualPage.synopsis("hapsync plot --out PATH.svg [--width PX] FILE")
            == "\\fBhapsync\\fR \\fBplot\\fR \\fB\\-\\-out\\fR \\fIPATH.svg\\fR "
            + "[\\fB\\-\\-width\\fR \\fIPX\\fR] \\fIFILE\\fR")
        #expect(ManualPage.date(secondsSince1970: 0) == "1970-01-01" && ManualPage.date(secondsSince1970: 1_738_281_600) == "2025-01-31")
    }
}
