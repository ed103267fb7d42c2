import BrokerCore
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// The consent requests without a bus: each ends once, however it ends, and ``PastePolicyFile``
/// remembers a decision as a line of its own.
@Suite struct PasteConsentsTests {
    static func request(_ reader: String = ":1.7") -> PasteConsentRequest {
        PasteConsentRequest(id: 0, readerApp: "org.example.Viewer", readerUniqueName: reader, readerPID: 7,
                              readerProcess: nil, sourceApp: "org.example.Notes", pasteboard: "general",
                              types: ["public.utf8-plain-text"], asked: Date(), expires: Date())
    }

    @Test func anAnswerEndsTheRequestOnceAndIsAnnounced() async throws {
        let announced = Mutex<[UInt64]>([])
        let ended = Mutex<[String]>([])
        let consents = PasteConsents(timeout: .seconds(30), requested: { request in announced.withLock { $0.append(request.id) } },
                                     ended: { request, outcome in ended.withLock { $0.append("\(request.id) \(outcome.rawValue)") } })
        let waiting = Task { await consents.ask(Self.request()) }
        try #require(await eventually(every: .milliseconds(5)) { !consents.pending.isEmpty })
        #expect(consents.pending.map(\.id) == [1])
        let request = consents.pending[0]
        #expect(abs(request.expires.timeIntervalSince(request.asked) - 30) < 0.001)
        try consents.answer(1, allow: true)
        #expect(throws: FerryModelError.self) { try consents.answer(1, allow: false) }
        let (asked, outcome) = await waiting.value
        #expect(asked.id == 1 && outcome == .allowed)
        #expect(announced.withLock { $0 } == [1])
        #expect(ended.withLock { $0 } == ["1 allowed"])
        #expect(consents.pending.isEmpty)
    }

    @Test func aTimeoutDeniesAndAWithdrawalEndsOnlyThatReadersRequests() async throws {
        let consents = PasteConsents(timeout: .milliseconds(50))
        let (_, timedOut) = await consents.ask(Self.request())
        #expect(timedOut == .timedOut)

        let slow = PasteConsents(timeout: .seconds(30))
        let first = Task { await slow.ask(Self.request(":1.7")) }
        let second = Task { await slow.ask(Self.request(":1.8")) }
        try #require(await eventually(every: .milliseconds(5)) { slow.pending.count == 2 })
        slow.withdraw(uniqueName: ":1.7")
        #expect(await first.value.1 == .withdrawn)
        #expect(slow.pending.map(\.readerUniqueName) == [":1.8"])
        second.cancel()
        #expect(await second.value.1 == .withdrawn, "a reader that stops waiting withdraws")
        #expect(slow.pending.isEmpty)
    }

    @Test func rememberAppendsALineMakingTheFolder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-remember-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("ferry/paste-policy").path
        let file = PastePolicyFile(path: path, logger: CapturedLog().logger())
        try file.remember(allow: true, app: "org.example.Viewer")
        #expect(file.current().decide(.app("org.example.Viewer"), userAction: false, hasForegroundScene: false).isAllowed)
        try "ask *".write(toFile: path, atomically: false, encoding: .utf8)
        try file.remember(allow: false, app: "org.example.Spy")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text == "ask *\ndeny org.example.Spy    # remembered from a paste consent request\n")
        #expect(file.current().rules.count == 2)
        #expect(throws: FerryModelError.self) { try file.remember(allow: true, app: "not an id") }
    }
}
