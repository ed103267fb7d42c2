import Ferry
import FerryBridge
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// `ferry history restore` of an entry the bridge imported from the desktop, on Xvfb with the
/// real ferryd, ferry-bridge and xclip.
@Suite("ferry-bridge on X11: a restored desktop entry goes back to the desktop")
struct X11BridgeRestoreTests {
    @Test("xclip copies A, then B; ferry history restore 0 (A) makes A the CLIPBOARD again; one Ferry change per copy")
    func restoreOfAnImportReachesTheDesktop() async throws {
        try await X11BridgeSession.with { session in
            let first = try session.xclipCopy(Data("A from xclip".utf8))
            defer { first.kill() }
            #expect(try await session.waitForCompleteImport())
            let afterA = try await session.client.general.changeCount
            let second = try session.xclipCopy(Data("B from xclip".utf8))
            defer { second.kill() }
            #expect(try await session.waitForCompleteImport(atLeast: afterA + 1))
            let afterB = try await session.client.general.changeCount
            #expect(afterB == afterA + 1, "one Ferry change per desktop copy")
            #expect(try await session.xclipPaste("UTF8_STRING").stdout == "B from xclip")

            #expect(try await session.ferry("history", "restore", "0").succeeded)
            let restored = try await session.client.general.items
            #expect(restored.first?.origin == "desktop:CLIPBOARD", "the restored entry keeps its origin")
            #expect(try await eventually { try await session.xclipPaste("UTF8_STRING").stdout == "A from xclip" })
            #expect(try await session.ferry("paste").stdout == "A from xclip")

            // The bridge's export of the restore is not imported back as another change.
            let afterRestore = try await session.client.general.changeCount
            await provingNothingHappens(for: .seconds(1))
            #expect(try await session.client.general.changeCount == afterRestore)
            let status = try #require(try await session.status())
            #expect(status.clipboard.owner == .ferry)
            #expect(status.clipboard.lastExport?.changeCount == afterRestore)

            // A new desktop copy after the restore is one change, and is not exported back.
            let third = try session.xclipCopy(Data("C from xclip".utf8))
            defer { third.kill() }
            #expect(try await session.waitForCompleteImport(atLeast: afterRestore + 1))
            await provingNothingHappens(for: .milliseconds(500))
            #expect(try await session.client.general.changeCount == afterRestore + 1)
            #expect(try await session.ferry("paste").stdout == "C from xclip")
            #expect(try #require(try await session.status()).clipboard.owner == .desktop)
        }
    }
}
