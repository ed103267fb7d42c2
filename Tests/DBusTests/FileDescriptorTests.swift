import FerryTestSupport
import FerrySystem
import Foundation
import Testing
@testable import DBus

/// The number of open descriptors of this process.
private func openDescriptorCount() throws -> Int {
    try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
}

/// Other tests run in parallel and open descriptors too, so leak checks make many descriptors
/// and allow some slack (a busy parallel run opened 41 meanwhile): a leak shows up as hundreds.
private let slack = 100

@Suite struct FileDescriptorTests {
    @Test func droppingClosesExactlyOnce() throws {
        let (r, w) = try FileDescriptor.pipe()
        try w.write(all: Array("hi".utf8))
        w.close()
        w.close()  // harmless
        #expect(!w.isOpen)
        // EOF proves the write end is closed.
        #expect(try r.readAll() == Array("hi".utf8))

        // A second close must not hit a descriptor that reused the number.
        let (r2, w2) = try FileDescriptor.pipe()
        w.close()
        try w2.write(all: [1, 2, 3])
        w2.close()
        #expect(try r2.readAll() == [1, 2, 3])
    }

    @Test func readUnreadTakesExactlyWhatThePipeHoldsOrNothing() throws {
        let (r, w) = try FileDescriptor.pipe()
        #expect(r.bytesUnread == 0)
        #expect(r.readUnread(exactly: 0) == [])
        try w.write(all: Array("hello".utf8))
        #expect(r.bytesUnread == 5)
        #expect(r.readUnread(exactly: 4) == nil, "fewer than it holds")
        #expect(r.readUnread(exactly: 6) == nil, "more than it holds: never waits for them")
        #expect(r.bytesUnread == 5, "nothing was read")
        #expect(r.readUnread(exactly: 5) == Array("hello".utf8))
        #expect(r.bytesUnread == 0)
        r.close()
        #expect(r.bytesUnread == nil)
        w.close()
    }

    @Test func takeRelinquishesOwnership() throws {
        let (r, w) = try FileDescriptor.pipe()
        let raw = try #require(w.take())
        #expect(w.take() == nil)
        #expect(!w.isOpen)
        w.close()  // nothing to close
        // The raw descriptor is still open and ours.
        #expect(Glibc.write(raw, "x", 1) == 1)
        #expect(Glibc.close(raw) == 0)
        #expect(try r.readAll() == Array("x".utf8))
        expectDBusError(.systemError) { _ = try w.duplicate() }
    }

    @Test("A closed descriptor: FerrySystem's withRawValue throws SystemCallError (EBADF), DBus's methods SystemError")
    func closedDescriptorErrors() throws {
        let (_, w) = try FileDescriptor.pipe()
        w.close()
        let thrown = #expect(throws: SystemCallError.self) { try w.withRawValue { _ in } }
        #expect(thrown?.code == EBADF)
        #expect(DBusError(converting: try #require(thrown)).name == .systemError)
        expectDBusError(.systemError) { try w.write(all: [1]) }
        expectDBusError(.systemError) { _ = try w.readAll() }
    }

    @Test func duplicateIsIndependent() throws {
        let (r, w) = try FileDescriptor.pipe()
        let copy = try w.duplicate()
        #expect(copy.rawValue != w.rawValue)
        w.close()
        try copy.write(all: [7])
        copy.close()
        #expect(try r.readAll() == [7])
    }

    @Test func noLeakAcrossManyDescriptorsAndMessages() throws {
        let before = try openDescriptorCount()
        for _ in 0..<200 {
            let (r, w) = try FileDescriptor.pipe()
            let dup = try r.duplicate()
            let raw = try #require(dup.take())
            Glibc.close(raw)
            let memfd = try FileDescriptor.memfd(name: "leak", contents: [1, 2, 3], sealed: true)
            let message = try Message.methodCall(destination: nil, path: "/t", interface: nil, member: "M",
                                                 body: [.unixFD(w), .unixFD(memfd), .unixFD(r)])
            let body = try message.body  // three new descriptors, owned by the values
            #expect(body.count == 3)
            let typed = try message.arguments(as: FileDescriptor.self, FileDescriptor.self, FileDescriptor.self)
            #expect(typed.1.isOpen)
            w.close()
        }
        let after = try openDescriptorCount()
        #expect(after - before < slack, "descriptors before: \(before), after: \(after)")
    }

    @Test func concurrentClosesCloseOnce() throws {
        for _ in 0..<50 {
            let (r, w) = try FileDescriptor.pipe()
            DispatchQueue.concurrentPerform(iterations: 8) { _ in w.close() }
            #expect(try r.readAll() == [])  // EOF: closed
            // Had any close run twice it could have hit this new pipe's descriptors.
            let (r2, w2) = try FileDescriptor.pipe()
            try w2.write(all: [5])
            w2.close()
            #expect(try r2.readAll() == [5])
        }
    }

    @Test func readingAnFDFromAValueDuplicatesIt() throws {
        let (r, w) = try FileDescriptor.pipe()
        let value = DBusValue.unixFD(w)
        let copy = try FileDescriptor(dbusValue: value)
        #expect(copy !== w && copy.rawValue != w.rawValue)
        w.close()
        try copy.write(all: [1])
        copy.close()
        #expect(try r.readAll() == [1])
        expectDBusError(.invalidArgs) { _ = try FileDescriptor(dbusValue: .int32(3)) }
    }

    @Test func sealedMemfdCannotChange() throws {
        let fd = try FileDescriptor.memfd(name: "sealed", contents: Array("payload".utf8), sealed: true)
        let seals = try #require(fd.seals)
        #expect(seals & fSealWrite != 0)
        expectDBusError(.systemError) { try fd.write(all: [0]) }
        #expect(try fd.readAll() == Array("payload".utf8))

        let open = try FileDescriptor.memfd(name: "open", contents: [1], sealed: false)
        #expect(open.seals == 0)
        try open.write(all: [2])  // allowed
    }

    @Test func readAllHonoursTheLimit() throws {
        let fd = try FileDescriptor.memfd(name: "big", contents: [UInt8](repeating: 1, count: 200_000), sealed: false)
        expectDBusError(.limitsExceeded) { _ = try fd.readAll(limit: 100_000) }
    }

    @Test func pipeCarriesMoreThanItsBuffer() throws {
        let (r, w) = try FileDescriptor.pipe(bufferSize: 1 << 20)
        var payload = [UInt8](repeating: 0, count: 3 << 20)
        for i in stride(from: 0, to: payload.count, by: 997) { payload[i] = UInt8(truncatingIfNeeded: i) }
        // A plain thread, not a task: blocking I/O must not hold a cooperative thread.
        let writer = Thread { [payload] in
            try? w.write(all: payload)
            w.close()
        }
        writer.start()
        let received = try r.readAll()
        #expect(firstDifference(received, payload) == nil)
    }
}

/// `F_SEAL_WRITE` (0x0008), spelled here so the test does not depend on the C module.
private let fSealWrite: Int32 = 0x0008
