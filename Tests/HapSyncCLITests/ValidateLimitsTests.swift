import Foundation
import HapSyncCLI
import Synchronization
import Testing

/// Runs `hapsync` in process and keeps each piece of standard output as it was written.
private func hapsyncPieces(_ args: String...) -> (status: Int32, pieces: [String]) {
    let pieces = Mutex<[String]>([])
    let console = HapSyncCLI.Console(out: { s in pieces.withLock { $0.append(s) } }, err: { _ in })
    let status = HapSyncCLI.main(args, console: console)
    return (status, pieces.withLock { $0 })
}

@Suite("validate: findings capped per file and written file by file")
struct ValidateLimitsTests {
    let comments = String(repeating: "// c\n", count: 3_000) + #"{ "Version": 1, "Pattern": [] }"#

    @Test func textSaysHowManyAreNotListed() throws {
        let url = try temporaryFile("comments.ahap", comments)
        let r = hapsync("validate", url.path)
        #expect(r.status == 0)
        let lines = r.out.split(separator: "\n")
        #expect(lines.filter { $0.contains("[comment]") }.count == 1_000)
        #expect(r.out.contains("\(url.path): 2000 more findings not listed (0 errors, 2000 warnings): at most 1000 are listed per file\n"))
        #expect(r.out.hasSuffix("\(url.path): valid (3000 warnings)\n"))
    }

    @Test func jsonSaysHowManyAreNotListed() throws {
        let url = try temporaryFile("comments.ahap", comments)
        let bad = try temporaryFile("bad.ahap", badAHAP)
        let r = hapsync("validate", "--json", url.path, bad.path)
        #expect(r.status == 1)
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        #expect(doc["valid"] as? Bool == false)
        let files = try #require(doc["files"] as? [[String: Any]])
        #expect(files.count == 2)
        #expect(files[0]["warnings"] as? Int == 3_000 && files[0]["errors"] as? Int == 0 && files[0]["valid"] as? Bool == true)
        #expect((files[0]["diagnostics"] as? [Any])?.count == 1_000)
        #expect(files[0]["omitted"] as? Int == 2_000)
        #expect(files[1]["omitted"] as? Int == 0 && files[1]["errors"] as? Int == 1)
    }

    @Test func eachFileIsWrittenWhenItIsChecked() throws {
        let a = try temporaryFile("a.ahap", warnOnlyAHAP), b = try temporaryFile("b.ahap", badAHAP)
        let text = hapsyncPieces("validate", a.path, b.path)
        #expect(text.status == 1)
        #expect(text.pieces.count >= 3, "one piece per file and the summary; got \(text.pieces.count)")
        #expect(text.pieces.first?.contains(a.path) == true && text.pieces.first?.contains(b.path) == false)
        let json = hapsyncPieces("validate", "--json", a.path, b.path)
        #expect(json.pieces.count >= 4, "the document's head, one piece per file and its tail; got \(json.pieces.count)")
        let doc = try JSONSerialization.jsonObject(with: Data(json.pieces.joined().utf8)) as? [String: Any]
        #expect((doc?["files"] as? [Any])?.count == 2)
    }
}
