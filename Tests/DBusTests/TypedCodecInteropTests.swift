import DBus
import FerryTestSupport
import Foundation
import Testing

/// The typed codec against independent implementations on a private bus: gdbus and busctl
/// calling a Swift object that reads its arguments typed, python-dbus answering typed calls,
/// descriptors both ways, and GDBus sending big-endian messages (the only peer here that can).
@Suite("Interop: the typed codec with gdbus, busctl, python-dbus and big-endian GDBus")
struct TypedCodecInteropTests {
    static let path: ObjectPath = "/org/ferry/Typed"
    static let interface: InterfaceName = "org.ferry.Typed1"
    static let glibPeer = TestPaths.packageRoot.appendingPathComponent("Tests/DBusTests/Peers/glib_peer.py").path

    /// An object whose handlers read their arguments with `Message.arguments(as:)`.
    static let typed = Interface(interface) {
        Method("Describe", in: ["index": "u", "text": "s", "options": "a{sv}"], out: ["description": "s"]) { call in
            let (index, text, options) = try call.message.arguments(as: UInt32.self, String.self,
                                                                    [String: DBusValue].self)
            let entries = options.keys.sorted().map { "\($0)=\(options[$0]!.signature):\(options[$0]!)" }
            let order = Character(Unicode.Scalar(try call.message.wireBytes()[0]))
            return [.string("\(index)|\(text)|\(entries.joined(separator: ","))|order=\(order)")]
        }
        Method("Sum", in: ["data": "ay", "scale": "d", "offset": "x"], out: ["sum": "t", "scaled": "d"]) { call in
            let (data, scale, offset) = try call.message.arguments(as: [UInt8].self, Double.self, Int64.self)
            let sum = data.reduce(UInt64(0)) { $0 + UInt64($1) }
            return [.uint64(sum), .double(Double(Int64(sum) + offset) * scale)]
        }
    }

    /// A Swift connection serving `typed`, with the environment for tools that call it.
    private func serve() async throws -> (service: Connection, bus: PrivateBus) {
        let bus = try PrivateBus.shared()
        let service = try await Connection(address: bus.address)
        try service.export(Self.typed, at: Self.path)
        return (service, bus)
    }

    @Test("gdbus calls a Swift object that reads its arguments typed")
    func gdbusCalls() async throws {
        let (service, bus) = try await serve()
        let result = try await ChildProcess.run("gdbus", [
            "call", "-a", bus.address, "-d", service.uniqueName.rawValue, "-o", Self.path.rawValue,
            "-m", "org.ferry.Typed1.Describe", "7", "grüße 🚢", "{'n': <int32 -5>, 'a': <['x', 'y']>, 'b': <@ay [1, 2]>}",
        ], environment: bus.environment())
        await service.close()
        #expect(result.status == 0, "\(String(decoding: result.standardError, as: UTF8.self))")
        let text = String(decoding: result.standardOutput, as: UTF8.self)
        #expect(text.contains(#"7|grüße 🚢|a=as:["x", "y"],b=ay:bytes [1, 2],n=i:-5|order=l"#), "\(text)")
    }

    @Test("busctl sends typed arguments and reads the typed reply as JSON")
    func busctlCalls() async throws {
        let (service, bus) = try await serve()
        defer { Task { await service.close() } }
        let destination = service.uniqueName.rawValue
        let describe = try await ChildProcess.run("busctl", [
            "--address=\(bus.address)", "--json=short", "--", "call", destination, Self.path.rawValue,
            Self.interface.rawValue, "Describe", "usa{sv}", "4294967295", "", "2", "t", "t", "18446744073709551615",
            "d", "d", "-0.5",
        ], environment: bus.environment())
        #expect(describe.status == 0, "\(String(decoding: describe.standardError, as: UTF8.self))")
        let reply = try JSONSerialization.jsonObject(with: describe.standardOutput) as? [String: Any]
        #expect(reply?["type"] as? String == "s")
        #expect((reply?["data"] as? [String])?.first == "4294967295||d=d:-0.5,t=t:uint64 18446744073709551615|order=l")

        let sum = try await ChildProcess.run("busctl", [
            "--address=\(bus.address)", "--json=short", "--", "call", destination, Self.path.rawValue,
            Self.interface.rawValue, "Sum", "aydx", "3", "255", "0", "1", "0.5", "-1",
        ], environment: bus.environment())
        // busctl prints a double as 1.275000000000000000000e+02: compare the parsed numbers.
        let sums = try JSONSerialization.jsonObject(with: sum.standardOutput) as? [String: Any]
        #expect(sums?["type"] as? String == "td")
        #expect((sums?["data"] as? [Double]) == [256, 127.5],
                "\(String(decoding: sum.standardOutput + sum.standardError, as: UTF8.self))")

    }

    @Test("python-dbus answers typed calls: numbers, arrays, a{sv} and a descriptor")
    func pythonDBus() async throws {
        let peer = try await RunningPeer(.python)
        defer { peer.process.stop() }
        func call<each A: DBusRepresentable>(_ member: MemberName, _ arguments: repeat each A) async throws -> Message {
            try await peer.client.call(Message.methodCall(destination: peer.name, path: RunningPeer.path,
                                                          interface: RunningPeer.interface, member: member,
                                                          arguments: repeat each arguments), timeout: .seconds(60))
        }
        #expect(try await call("Add", Int64.max - 2, Int64(2)).arguments(as: Int64.self) == .max)
        #expect(try await call("Join", ["copy", "", "grüße"]).arguments(as: String.self) == "copy||grüße")
        let options: [String: DBusValue] = ["u": .uint32(7), "ay": .bytes([1, 2]), "as": .array(element: "s", elements: ["x"]),
                                            "a{sv}": .variantDictionary(["d": .double(0.5)]), "o": .objectPath("/a")]
        let seen = try await call("Signatures", options).arguments(as: [String: String].self)
        #expect(seen == ["u": "u", "ay": "ay", "as": "as", "a{sv}": "a{sv}", "o": "o"])

        let (reader, writer) = try FileDescriptor.pipe()
        let payload = [UInt8](repeating: 7, count: 10_000)
        try writer.withRawValue { raw in
            _ = payload.withUnsafeBytes { Foundation.write(raw, $0.baseAddress, $0.count) }
        }
        writer.close()
        let (size, _) = try await call("ReadFD", reader).arguments(as: UInt64.self, UInt32.self)
        #expect(size == 10_000)
        // A descriptor in a reply: libdbus hands it out, the typed read takes it.
        let made = try await call("MakeFD", UInt64(300)).arguments(as: FileDescriptor.self)
        var pattern = [UInt8](repeating: 0, count: 400)
        let n = try made.withRawValue { raw in pattern.withUnsafeMutableBytes { Foundation.read(raw, $0.baseAddress, $0.count) } }
        #expect(n == 300 && Array(pattern[..<300]) == (0..<300).map { UInt8(truncatingIfNeeded: $0) })
    }

    @Test("GDBus's big-endian replies read typed, and its big-endian calls reach a typed handler")
    func bigEndianGDBus() async throws {
        let bus = try PrivateBus.shared()
        let name = "org.ferry.GLibPeer.T\(UInt32.random(in: 0...UInt32.max))"
        let peer = try await ServiceProcess("/usr/bin/python3", [Self.glibPeer, "serve", name],
                                            environment: bus.environment())
        defer { peer.stop() }
        let client = try await Connection(address: bus.address)
        func call<each A: DBusRepresentable>(_ member: MemberName, _ arguments: repeat each A) async throws -> Message {
            let reply = try await client.call(Message.methodCall(destination: try BusName(name), path: "/org/ferry/GLibPeer",
                                                                 interface: "org.ferry.GLibPeer1", member: member,
                                                                 arguments: repeat each arguments), timeout: .seconds(60))
            #expect(try reply.wireBytes()[0] == UInt8(ascii: "B"), "the reply to \(member) is big-endian")
            return reply
        }
        let options: [String: DBusValue] = ["user-action": .boolean(true), "change-count": .uint64(.max - 1),
                                            "nested": .variantDictionary(["deep": .int16(-2)])]
        let (index, type, echoed) = try await call("Echo3", UInt32(0xDEAD_BEEF), "public.utf8-plain-text", options)
            .arguments(as: UInt32.self, String.self, [String: DBusValue].self)
        #expect(index == 0xDEAD_BEEF && type == "public.utf8-plain-text")
        #expect(echoed == options)
        let kibibyte = (0..<1024).map { UInt8(truncatingIfNeeded: $0 * 7) }
        #expect(try await call("EchoBytes", kibibyte).arguments(as: [UInt8].self) == kibibyte)
        let numbers = try await call("Numbers").arguments(
            as: UInt8.self, Bool.self, Int16.self, UInt16.self, Int32.self, UInt32.self, Int64.self, UInt64.self,
            Double.self, String.self, ObjectPath.self, Signature.self)
        #expect(numbers.0 == 255 && numbers.1 && numbers.2 == .min && numbers.3 == .max && numbers.4 == .min)
        #expect(numbers.5 == .max && numbers.6 == .min && numbers.7 == .max && numbers.8 == -0.5)
        #expect(numbers.9 == "grüße 🚢" && numbers.10 == "/org/ferry/Pasteboard/general" && numbers.11 == "a{sv}(iay)")
        await client.close()

        // The other way: GDBus calls a Swift handler in big-endian.
        let (service, _) = try await serve()
        let result = try await ChildProcess.run("/usr/bin/python3", [
            Self.glibPeer, "call", service.uniqueName.rawValue, Self.path.rawValue, Self.interface.rawValue,
            "Describe", "usa{sv}", "(4000000000, 'bé', {'x': <int64 -9>, 'y': <(byte 1, 'z')>})",
        ], environment: bus.environment())
        await service.close()
        #expect(result.status == 0, "\(String(decoding: result.standardError, as: UTF8.self))")
        #expect(String(decoding: result.standardOutput, as: UTF8.self)
            .contains(#"('4000000000|bé|x=x:int64 -9,y=(ys):(byte 1, "z")|order=B',)"#))
    }
}
