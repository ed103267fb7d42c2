import DBus
import FerryTestSupport
import Foundation
import Testing

/// Paste consent (iOS 16's "Allow Paste"): a registered app reading another app's content
/// without a user action, when the paste policy says `ask`, is held until the user answers
/// through `org.ferry.Broker1.AnswerPasteConsent`; a timeout denies; reading what the app wrote
/// itself and user-action reads never ask. The ask comes from `ask org.ferry.gallery` in the
/// policy file (the default asks only apps with a foreground scene, as in `PastePolicyTests`).
@Suite("ferryd: paste consent", .serialized)
struct PasteConsentTests {
    typealias F = FerrydFixture

    /// A ferryd whose policy file asks about the gallery, a user's tool connection listening to
    /// the consent signals, and the gallery app registered.
    struct Setup {
        let fixture: FerrydFixture
        let policy: URL
        let daemon: ServiceProcess
        let tool: Connection
        let gallery: Connection
        let requests: SignalSubscription
        let ends: SignalSubscription

        static func start(_ rules: String = "ask org.ferry.gallery\n", timeout: String = "20",
                          bus: PrivateBus? = nil) async throws -> Setup {
            let fixture = try FerrydFixture(bus: bus)
            let policy = fixture.stateDir.deletingLastPathComponent().appendingPathComponent("policy-\(UUID().uuidString)")
            try rules.write(to: policy, atomically: true, encoding: .utf8)
            let daemon = try await fixture.start(["--policy", policy.path, "--consent-timeout", timeout])
            let tool = try await fixture.connect()
            let requests = try await tool.subscribe(to: MatchRule(interface: F.interface, member: "PasteConsentRequested"))
            let ends = try await tool.subscribe(to: MatchRule(interface: F.interface, member: "PasteConsentEnded"))
            let gallery = try await fixture.connect()
            try await F.register(gallery, "org.ferry.gallery", manifest: try F.manifest("Gallery"))
            return Setup(fixture: fixture, policy: policy, daemon: daemon, tool: tool, gallery: gallery,
                         requests: requests, ends: ends)
        }

        func stop() async {
            requests.cancel()
            ends.cancel()
            await gallery.close(gracePeriod: .zero)
            await tool.close(gracePeriod: .zero)
            daemon.stop()
            try? FileManager.default.removeItem(at: policy)
            fixture.cleanUp()
        }

        /// The next consent request announced: its id and the signal's other arguments.
        func nextRequest() async throws -> (id: UInt64, body: [DBusValue]) {
            let message = try #require(try await F.next(requests))
            let body = try message.body
            return (try body[0].get(UInt64.self), body)
        }

        /// The next end announced: id and outcome.
        func nextEnd() async throws -> (UInt64, String) {
            let message = try #require(try await F.next(ends))
            let body = try message.body
            return (try body[0].get(UInt64.self), try body[1].get(String.self))
        }

        func pending() async throws -> [VariantDictionary] {
            try await F.call(tool, "PendingPasteConsents")[0].get([VariantDictionary].self)
        }

        func answer(_ id: UInt64, _ decision: String, remember: Bool = false, from connection: Connection? = nil) async throws {
            _ = try await F.call(connection ?? tool, "AnswerPasteConsent",
                                 [.uint64(id), .string(decision), .variantDictionary(["remember": .boolean(remember)])])
        }

        func log() async throws -> [VariantDictionary] {
            try await F.call(tool, "PasteLog", [.uint32(10)])[0].get([VariantDictionary].self)
        }
    }

    @Test("a cross-app read without a user action is announced and waits; others go on; allow hands over the bytes")
    func askThenAllow() async throws {
        let setup = try await Setup.start()
        do {
            try await F.setItems(setup.tool, [F.item([F.representation("public.utf8-plain-text", "the secret plan")])])
            let read = Task { try await F.read(setup.gallery, 0, "public.text") }
            let (id, body) = try await setup.nextRequest()
            #expect(try body[1].get(String.self) == "org.ferry.gallery")
            #expect(try body[3].get(String.self) == "", "the CLI wrote the item: no source app")
            #expect(try body[4].get(String.self) == "general")
            #expect(try body[5].get([String].self) == ["public.utf8-plain-text"])

            // The held read blocks nobody else: the user's own paste and a listing go through.
            #expect(try await F.read(setup.tool, 0, "public.text").bytes() == Array("the secret plan".utf8))
            let pending = try await setup.pending()
            #expect(pending.count == 1)
            #expect(try pending.first?.value(forKey: "id", as: UInt64.self) == id)
            #expect(try pending.first?.value(forKey: "reader-unique-name", as: String.self) == setup.gallery.uniqueName.rawValue)
            #expect(try pending.first?.value(forKey: "reader-pid", as: Int32.self) == getpid())
            await provingNothingHappens(for: .milliseconds(200))
            #expect(!read.isCancelled)

            try await setup.answer(id, "allow")
            #expect(try await read.value.bytes() == Array("the secret plan".utf8))
            let (endedID, outcome) = try await setup.nextEnd()
            #expect(endedID == id && outcome == "allowed")
            #expect(try await setup.pending().isEmpty)
            let log = try await setup.log()
            #expect(try log.first?.value(forKey: "app-id", as: String.self) == "org.ferry.gallery")
            #expect(try log.first?.value(forKey: "consent", as: String.self) == "allowed")
            #expect(log.dropFirst().first?["consent"] == nil, "the CLI's own paste asked nobody")

            let again = await F.failure { try await setup.answer(id, "allow") }
            #expect(again?.name == "org.ferry.Error.NotFound", "an answered request is gone")
        } catch {
            await setup.stop()
            throw error
        }
        await setup.stop()
    }

    @Test("deny refuses with PermissionDenied and the timeout with Timeout; both are logged")
    func denyAndTimeout() async throws {
        let setup = try await Setup.start(timeout: "1.5")
        do {
            try await F.setItems(setup.tool, [F.item([F.representation("public.utf8-plain-text", "no")])])
            let denied = Task { await F.failure { _ = try await F.read(setup.gallery, 0, "public.text") } }
            let (id, _) = try await setup.nextRequest()
            try await setup.answer(id, "deny")
            let refusal = await denied.value
            #expect(refusal?.name == "org.ferry.Error.PermissionDenied")
            #expect(refusal?.message.contains("the user did not allow org.ferry.gallery") == true, "\(String(describing: refusal))")
            #expect(try await setup.nextEnd() == (id, "denied"))

            let started = ContinuousClock.now
            let late = await F.failure { _ = try await F.read(setup.gallery, 0, "public.text") }
            let waited = ContinuousClock.now - started
            #expect(late?.name == "org.ferry.Error.Timeout", "\(String(describing: late))")
            #expect(late?.message.contains("nobody answered paste consent request") == true && late?.message.contains("within 1.5 s") == true)
            #expect(waited >= .seconds(1.4) && waited < .seconds(10), "\(waited)")
            let (timedOutID, outcome) = try await setup.nextEnd()
            #expect(outcome == "timed-out" && timedOutID > id)
            let log = try await setup.log()
            #expect(try log.map { try $0.value(forKey: "consent", as: String.self) } == ["timed-out", "denied"])
            #expect(try log.allSatisfy { try $0.value(forKey: "app-id", as: String.self) == "org.ferry.gallery" })
            let bad = await F.failure { try await setup.answer(timedOutID, "maybe") }
            #expect(bad?.name == "org.ferry.Error.InvalidArgument")
        } catch {
            await setup.stop()
            throw error
        }
        await setup.stop()
    }

    @Test("reading what the app wrote itself and reading on a user action never ask")
    func ownContentAndUserAction() async throws {
        let setup = try await Setup.start()
        do {
            try await F.setItems(setup.gallery, [F.item([F.representation("public.utf8-plain-text", "mine")])])
            #expect(try await F.read(setup.gallery, 0, "public.text").bytes() == Array("mine".utf8))
            try await F.setItems(setup.tool, [F.item([F.representation("public.utf8-plain-text", "yours")])])
            #expect(try await F.read(setup.gallery, 0, "public.text", ["user-action": .boolean(true)]).bytes()
                    == Array("yours".utf8))
            #expect(try await setup.pending().isEmpty)
            let log = try await setup.log()
            #expect(log.count == 2 && log.allSatisfy { $0["consent"] == nil }, "\(log)")
            // Nothing was announced: the next request announced is the one made now.
            let read = Task { await F.failure { _ = try await F.read(setup.gallery, 0, "public.text") } }
            let (id, _) = try await setup.nextRequest()
            #expect(id == 1, "the two reads above asked nobody")
            try await setup.answer(id, "deny")
            #expect(await read.value?.name == "org.ferry.Error.PermissionDenied")
        } catch {
            await setup.stop()
            throw error
        }
        await setup.stop()
    }

    @Test("remember writes the decision into the policy file: the next read is decided without asking")
    func remember() async throws {
        let setup = try await Setup.start("# mine\nask org.ferry.gallery")
        do {
            try await F.setItems(setup.tool, [F.item([F.representation("public.utf8-plain-text", "again")])])
            let read = Task { try await F.read(setup.gallery, 0, "public.text") }
            let (id, _) = try await setup.nextRequest()
            try await setup.answer(id, "allow", remember: true)
            #expect(try await read.value.bytes() == Array("again".utf8))
            let file = try String(contentsOf: setup.policy, encoding: .utf8)
            #expect(file.hasPrefix("# mine\nask org.ferry.gallery\nallow org.ferry.gallery "), "\(file)")
            #expect(try await F.read(setup.gallery, 0, "public.text").bytes() == Array("again".utf8), "no asking now")
            #expect(try await setup.pending().isEmpty)
            let log = try await setup.log()
            #expect(log.count == 2 && log.first?["consent"] == nil)
        } catch {
            await setup.stop()
            throw error
        }
        await setup.stop()
    }

    @Test("without rules a foreground app is asked and a background app denied, as iOS lets only foreground apps read")
    func defaultRules() async throws {
        let setup = try await Setup.start("")
        do {
            let notes = try await FakeSceneApp.start(setup.fixture, "org.ferry.notes", manifest: try F.manifest("Notes"))
            _ = try await SceneServiceTests.firstSession(notes)
            try await F.setItems(setup.tool, [F.item([F.representation("public.utf8-plain-text", "to the front")])])

            let background = await F.failure { _ = try await F.read(setup.gallery, 0, "public.text") }
            #expect(background?.name == "org.ferry.Error.PermissionDenied", "the gallery shows no scene")
            let read = Task { try await F.read(notes.connection, 0, "public.text") }
            let (id, body) = try await setup.nextRequest()
            #expect(try body[1].get(String.self) == "org.ferry.notes")
            try await setup.answer(id, "allow")
            #expect(try await read.value.bytes() == Array("to the front".utf8))
            #expect(try await F.read(notes.connection, 0, "public.text", ["user-action": .boolean(true)]).bytes()
                    == Array("to the front".utf8), "a user action never asks")
            #expect(try await setup.pending().isEmpty)
            await notes.quit()
        } catch {
            await setup.stop()
            throw error
        }
        await setup.stop()
    }

    static let foreignScript = #"""
        import dbus, sys
        bus = dbus.bus.BusConnection(sys.argv[1])
        def attempt(name, method, signature, args):
            try:
                bus.call_blocking("org.ferry.Broker", "/org/ferry/Broker", "org.ferry.Broker1", method, signature, args, timeout=30)
                print(name, "OK")
            except dbus.DBusException as e:
                print(name, e.get_dbus_name())
            sys.stdout.flush()
        attempt("pending", "PendingPasteConsents", "", [])
        attempt("allow", "AnswerPasteConsent", "tsa{sv}", [dbus.UInt64(int(sys.argv[2])), "allow", {}])
        print("READY")
        sys.stdout.flush()
        """#

    @Test("a caller of another uid can neither list nor answer a request", .enabled(if: getuid() == 0))
    func anotherUserCannotAnswer() async throws {
        let bus = try PrivateBus.admittingEveryUser()
        defer { bus.stop() }
        let setup = try await Setup.start(bus: bus)
        do {
            try await F.setItems(setup.tool, [F.item([F.representation("public.utf8-plain-text", "mine alone")])])
            let read = Task { await F.failure { _ = try await F.read(setup.gallery, 0, "public.text") } }
            let (id, _) = try await setup.nextRequest()
            let foreign = try await ServiceProcess("/usr/bin/setpriv", [
                "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", Self.foreignScript, bus.address,
                String(id),
            ], environment: bus.environment(), timeout: .seconds(60))
            defer { foreign.stop() }
            #expect(foreign.standardOutput == "pending org.ferry.Error.PermissionDenied\nallow org.ferry.Error.PermissionDenied\nREADY\n",
                    "\(foreign.standardOutput)\n\(foreign.standardError)")
            #expect(try await setup.pending().count == 1, "the request still waits for its user")
            try await setup.answer(id, "deny")
            #expect(await read.value?.name == "org.ferry.Error.PermissionDenied")
        } catch {
            await setup.stop()
            throw error
        }
        await setup.stop()
    }

    @Test("several requests wait at once; an app cannot answer; a forged id is NotFound; a reader that leaves withdraws")
    func manyAppsAndWithdrawal() async throws {
        let setup = try await Setup.start("ask org.ferry.gallery\nask org.ferry.notes\n")
        do {
            try await F.setItems(setup.tool, [F.item([F.representation("public.utf8-plain-text", "shared")])])
            let notes = try await setup.fixture.connect()
            try await F.register(notes, "org.ferry.notes", manifest: try F.manifest("Notes"))
            let galleryRead = Task { await F.failure { _ = try await F.read(setup.gallery, 0, "public.text") } }
            let first = try await setup.nextRequest()
            let notesRead = Task { try await F.read(notes, 0, "public.text") }
            let second = try await setup.nextRequest()
            #expect(try second.body[1].get(String.self) == "org.ferry.notes")
            #expect(try await setup.pending().map { try $0.value(forKey: "id", as: UInt64.self) } == [first.id, second.id])

            let selfAnswer = await F.failure { try await setup.answer(first.id, "allow", from: setup.gallery) }
            #expect(selfAnswer?.name == "org.ferry.Error.PermissionDenied", "an app may not answer for itself")
            let forged = await F.failure { try await setup.answer(second.id + 1000, "allow") }
            #expect(forged?.name == "org.ferry.Error.NotFound")

            try await setup.answer(second.id, "allow")
            #expect(try await notesRead.value.bytes() == Array("shared".utf8))
            #expect(try await setup.nextEnd() == (second.id, "allowed"))

            await setup.gallery.close(gracePeriod: .zero)
            #expect(try await setup.nextEnd() == (first.id, "withdrawn"))
            #expect(await galleryRead.value != nil, "the gallery's read did not succeed")
            #expect(try await setup.pending().isEmpty)
            await notes.close()
        } catch {
            await setup.stop()
            throw error
        }
        await setup.stop()
    }
}
