@testable import FerryContinuity
import BrokerCore
import FerryBroker
import FerryModel
import Foundation
import Testing

/// What an announcement carries, without an engine: the rules of what never leaves the machine,
/// the hybrid clock, nkeys and the seal.
@Suite("Continuity: envelopes, clock, nkeys, seal")
struct EnvelopeTests {
    let text = ContentType("public.utf8-plain-text")!
    let png = ContentType("public.png")!

    @Test("localOnly, expired and remote items, ownApp representations and dropped promises are left out; promised ones go, size unknown")
    func whatLeaves() throws {
        let stamp = ClockStamp(wall: 1, counter: 0, device: "laptop")
        let items = [
            StoredItem(id: UUID(), options: .init(localOnly: true), representations: [.init(contentType: text, size: 3, storage: .inline)]),
            StoredItem(id: UUID(), options: .init(expirationDate: Date(timeIntervalSinceNow: -1)),
                       representations: [.init(contentType: text, size: 3, storage: .inline)]),
            StoredItem(id: UUID(), options: .init(origin: "continuity:desktop"),
                       representations: [.init(contentType: text, size: 3, storage: .promised(owner: "continuity:desktop/x"))]),
            StoredItem(id: UUID(), suggestedName: "photo", representations: [
                .init(contentType: png, visibility: .ownApp, size: 10, storage: .blob),
                .init(contentType: text, size: 5, storage: .inline),
                .init(contentType: ContentType("public.html")!, size: nil, storage: .promised(owner: ":1.5")),
                .init(contentType: ContentType("public.rtf")!, size: 9, storage: .unavailable),
            ]),
        ]
        let envelope = Continuity.envelope(of: items, device: "laptop", stamp: stamp, changeCount: 7)
        #expect(envelope.items.count == 1)
        #expect(envelope.items[0].id == items[3].id)
        #expect(envelope.items[0].name == "photo")
        #expect(envelope.items[0].types == [Envelope.Representation(type: text.identifier, size: 5),
                                            Envelope.Representation(type: "public.html", size: nil)])
        #expect(Continuity.envelope(of: Array(items.prefix(3)), device: "laptop", stamp: stamp, changeCount: 7).items.isEmpty)
    }

    @Test("the hybrid clock orders a later event after one it has seen, whatever the wall clocks say")
    func clock() {
        let laptop = HybridClock(device: "laptop") { 1_000 }
        let desktop = HybridClock(device: "desktop") { 5_000 }  // its clock runs ahead
        let remote = desktop.tick()
        laptop.observe(remote)
        let local = laptop.tick()
        #expect(local > remote)
        #expect(laptop.tick() > local)
    }

    @Test("an nkey seed gives the public key it was made with; a damaged one is refused")
    func nkeys() throws {
        let pair = NKey.makeUserSeed()
        #expect(pair.seed.hasPrefix("SU"))
        #expect(pair.publicKey.hasPrefix("U"))
        #expect(try NKey.publicKey(ofSeed: pair.seed) == pair.publicKey)
        var damaged = Array(pair.seed)
        damaged[10] = damaged[10] == "A" ? "B" : "A"
        #expect(throws: NKey.Failure.self) { try NKey.publicKey(ofSeed: String(damaged)) }
    }

    @Test("a sealed value opens only with the same key and context; key and creds files wider than 0600 are refused")
    func seal() throws {
        let key = try Seal(key: Array(repeating: 7, count: 32))
        let sealed = try key.seal(Array("secret".utf8), context: "kv:ferry_pb.laptop")
        #expect(try key.open(sealed, context: "kv:ferry_pb.laptop") == Array("secret".utf8))
        #expect(throws: EngineError.self) { try key.open(sealed, context: "kv:ferry_pb.desktop") }
        #expect(throws: EngineError.self) { try Seal(key: Array(repeating: 8, count: 32)).open(sealed, context: "kv:ferry_pb.laptop") }
        #expect(!sealed.indices.contains { sealed[$0...].starts(with: Array("secret".utf8)) })

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-key-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(FileManager.default.createFile(atPath: file, contents: Data(Seal.makeKeyText().utf8), attributes: [.posixPermissions: 0o644]))
        #expect(throws: EngineError.self) { try Seal(keyFile: file) }
        chmod(file, 0o600)
        _ = try Seal(keyFile: file)
    }
}
