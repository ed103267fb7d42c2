import BrokerCore
import FerryModel
import Testing

@Suite("Desktop placement")
struct DesktopPlacementTests {
    @discardableResult
    func open(_ desktop: inout Desktop, _ id: String, screen: Int? = nil, requesting: String? = nil,
              placement: ScenePlacement? = nil) -> [Desktop.Window] {
        desktop.placeNew(id: id, appID: "org.example.App", screen: screen, requesting: requesting, placement: placement)
    }

    @Test func screensAreLaidOutLeftToRight() {
        let desktop = Desktop(screenSizes: [Size(width: 1920, height: 1080), Size(width: 1280, height: 1024)])
        #expect(desktop.screens == [
            Screen(index: 0, frame: Rect(x: 0, y: 0, width: 1920, height: 1080)),
            Screen(index: 1, frame: Rect(x: 1920, y: 0, width: 1280, height: 1024)),
        ])
        #expect(Desktop().screens == [Screen(index: 0, frame: Rect(x: 0, y: 0, width: 1920, height: 1080))])
        #expect(Desktop(screenSizes: []).screens.count == 1)
        #expect(Desktop().edgeZone == 24)
    }

    @Test func screenSizesAreValidated() {
        #expect(throws: FerryModelError.self) { try Desktop.validate(screenSizes: [], edgeZone: 24) }
        #expect(throws: FerryModelError.self) { try Desktop.validate(screenSizes: [Size(width: 0, height: 10)], edgeZone: 24) }
        #expect(throws: FerryModelError.self) {
            try Desktop.validate(screenSizes: [Size(width: .nan, height: 10)], edgeZone: 24)
        }
        #expect(throws: FerryModelError.self) { try Desktop.validate(screenSizes: [Desktop.defaultScreenSize], edgeZone: -1) }
        #expect(throws: Never.self) { try Desktop.validate(screenSizes: [Size(width: 800, height: 600)], edgeZone: 0) }
    }

    @Test func newWindowsCascadeAndWrap() {
        var desktop = Desktop()
        let first = open(&desktop, "w0")
        #expect(first.map(\.frame) == [Rect(x: 48, y: 48, width: 960, height: 640)])
        #expect(first.first?.screen == 0)
        #expect(first.first?.isConnected == false)
        #expect(open(&desktop, "w1").first?.frame == Rect(x: 80, y: 80, width: 960, height: 640))
        // 48 + 12 × 32 = 432, and 432 + 640 = 1072 still fits in 1080; 464 + 640 does not.
        for index in 2...12 { open(&desktop, "w\(index)") }
        #expect(desktop.windows["w12"]?.frame == Rect(x: 432, y: 432, width: 960, height: 640))
        #expect(open(&desktop, "w13").first?.frame == Rect(x: 48, y: 48, width: 960, height: 640))
        #expect(open(&desktop, "w14").first?.frame == Rect(x: 80, y: 80, width: 960, height: 640))
    }

    @Test func cascadeFollowsTheFrontMostWindowEvenWhenMoved() {
        var desktop = Desktop()
        open(&desktop, "a")
        _ = desktop.setFrame("a", Rect(x: 300, y: 100, width: 500, height: 400))
        #expect(open(&desktop, "b").first?.frame == Rect(x: 332, y: 132, width: 960, height: 640))
        // A window moved so that the next one would leave the screen: wrap to the start.
        _ = desktop.setFrame("b", Rect(x: 1000, y: 100, width: 500, height: 400))
        #expect(open(&desktop, "c").first?.frame == Rect(x: 48, y: 48, width: 960, height: 640))
    }

    @Test func aRequestedWindowCascadesFromTheSceneThatAsked() {
        var desktop = Desktop()
        open(&desktop, "asker")  // (48, 48)
        open(&desktop, "front")  // (80, 80), in front of it
        #expect(open(&desktop, "new", requesting: "asker").first?.frame == Rect(x: 80, y: 80, width: 960, height: 640))
        #expect(open(&desktop, "plain").first?.frame == Rect(x: 112, y: 112, width: 960, height: 640),
                "without a requesting scene it cascades from the front-most")
    }

    @Test func newWindowsAreClippedToSmallScreens() {
        var desktop = Desktop(screenSizes: [Size(width: 800, height: 600)])
        #expect(open(&desktop, "a").first?.frame == Rect(x: 0, y: 0, width: 800, height: 600))
        var roomy = Desktop(screenSizes: [Size(width: 1000, height: 700)])
        let frame = open(&roomy, "a").first?.frame
        #expect(frame == Rect(x: 40, y: 48, width: 960, height: 640))
    }

    @Test func stackOrdersAreUniqueAndIncreasing() throws {
        var desktop = Desktop()
        for index in 0..<5 { open(&desktop, "w\(index)") }
        let orders = (0..<5).map { desktop.windows["w\($0)"]!.stackOrder }
        #expect(orders == orders.sorted() && Set(orders).count == 5)
        #expect(desktop.stack(onScreen: 0).map(\.id) == ["w4", "w3", "w2", "w1", "w0"])
        desktop.bringToFront("w1")
        #expect(desktop.stack(onScreen: 0).map(\.id) == ["w1", "w4", "w3", "w2", "w0"])
        let front = try #require(desktop.windows["w1"]).stackOrder
        #expect(desktop.windows.values.allSatisfy { $0.id == "w1" || $0.stackOrder < front })
        // Reopening an existing identifier replaces it and puts it in front.
        open(&desktop, "w0")
        #expect(desktop.windows.count == 5)
        #expect(desktop.stack(onScreen: 0).first?.id == "w0")
        #expect(desktop.stack(onScreen: 3).isEmpty)
    }

    @Test func insertClampsScreensAndKeepsStackOrdersUnique() {
        var desktop = Desktop(screenSizes: [Desktop.defaultScreenSize, Desktop.defaultScreenSize])
        let frame = Rect(x: 10, y: 10, width: 100, height: 100)
        desktop.insert(.init(id: "a", appID: "org.example.A", frame: frame, screen: 9, stackOrder: 7, isConnected: true))
        desktop.insert(.init(id: "b", appID: "org.example.A", frame: frame, screen: -2, stackOrder: 7, isConnected: false))
        #expect(desktop.windows["a"]?.screen == 1)
        #expect(desktop.windows["a"]?.stackOrder == 7)
        #expect(desktop.windows["b"]?.screen == 0)
        #expect(desktop.windows["b"]!.stackOrder > 7)
        // New windows go in front of restored ones.
        let new = open(&desktop, "c", screen: 1).first
        #expect(new!.stackOrder > desktop.windows["b"]!.stackOrder)
        // A window stored on a screen that is gone is moved onto the last one, clipped.
        desktop.insert(.init(id: "far", appID: "org.example.A", frame: Rect(x: 5000, y: -40, width: 3000, height: 300),
                             screen: 2, stackOrder: 50, isConnected: false))
        #expect(desktop.windows["far"]?.screen == 1)
        #expect(desktop.windows["far"]?.frame == Rect(x: 1920, y: 0, width: 1920, height: 300))
        // One that still overlaps its screen stays where it was.
        let straddling = Rect(x: 1800, y: 10, width: 400, height: 300)
        desktop.insert(.init(id: "far", appID: "org.example.A", frame: straddling, screen: 1, stackOrder: 50, isConnected: false))
        #expect(desktop.windows["far"]?.frame == straddling)
        #expect(desktop.windows["far"]?.screen == 1)
        desktop.remove("far")
        // A stack order too large to count up from is replaced; the order stays consistent.
        desktop.insert(.init(id: "huge", appID: "org.example.A", frame: frame, screen: 0, stackOrder: .max, isConnected: true))
        #expect(desktop.windows["huge"]!.stackOrder < .max)
        #expect(open(&desktop, "after").first!.stackOrder > desktop.windows["huge"]!.stackOrder)
        desktop.remove("huge")
        desktop.remove("after")
        desktop.remove("a")
        desktop.remove("nobody")
        #expect(desktop.windows["a"] == nil && desktop.windows.count == 2)
    }

    /// Stack orders as a store hands them back (any Int64, any load order) keep their stacking,
    /// and new or raised windows never overflow past them.
    @Test func restoredStackOrdersKeepTheirStackingAndNeverOverflow() {
        var desktop = Desktop()
        let frame = Rect(x: 10, y: 10, width: 100, height: 100)
        let stored: [(String, Int64)] = [("top", Desktop.largestRestoredStackOrder), ("low", .min), ("mid", -5),
                                         ("high", 3), ("beyond", Desktop.largestRestoredStackOrder + 1)]
        for (id, order) in stored {
            desktop.insert(.init(id: id, appID: "org.example.A", frame: frame, screen: 0, stackOrder: order, isConnected: true))
        }
        // "beyond" cannot be kept: it is put in front of every window loaded before it.
        #expect(desktop.stack(onScreen: 0).map(\.id) == ["beyond", "top", "high", "mid", "low"])
        #expect(desktop.windows["top"]?.stackOrder == Desktop.largestRestoredStackOrder)
        #expect(desktop.derivedStates()["beyond"] == .foregroundActive)
        for round in 0..<1000 { desktop.bringToFront(round.isMultiple(of: 2) ? "low" : "mid") }
        let placed = open(&desktop, "new").first
        #expect(desktop.stack(onScreen: 0).map(\.id) == ["new", "mid", "low", "beyond", "top", "high"])
        let orders = desktop.stack(onScreen: 0).map(\.stackOrder)
        #expect(orders == orders.sorted(by: >) && Set(orders).count == orders.count)
        #expect(placed?.stackOrder == orders.first && orders.first! > Desktop.largestRestoredStackOrder)
    }

    /// Screens that grew since a window was stored: it stays where it was, and its screen is the
    /// one its centre is on now, so states and cascades follow where it is seen.
    @Test func restoredWindowsTakeTheScreenOfTheirCentre() {
        // Stored on screen 1 of two 1920-wide screens, at x 1920…2880; now screen 0 is 2560 wide.
        var desktop = Desktop(screenSizes: [Size(width: 2560, height: 1440), Desktop.defaultScreenSize])
        let frame = Rect(x: 1920, y: 100, width: 960, height: 640)
        desktop.insert(.init(id: "a", appID: "org.example.A", frame: frame, screen: 1, stackOrder: 1, isConnected: true))
        desktop.insert(.init(id: "b", appID: "org.example.A", frame: Rect(x: 100, y: 100, width: 300, height: 300),
                             screen: 0, stackOrder: 2, isConnected: true))
        #expect(desktop.windows["a"]?.frame == frame)
        #expect(desktop.windows["a"]?.screen == 0)
        #expect(desktop.stack(onScreen: 0).map(\.id) == ["b", "a"])
        #expect(desktop.derivedStates() == ["b": .foregroundActive, "a": .foregroundInactive])
    }

    @Test func screenChoiceFollowsTheRequestThenTheRequester() {
        var desktop = Desktop(screenSizes: [Desktop.defaultScreenSize, Size(width: 1280, height: 1024)])
        #expect(open(&desktop, "a", screen: 1).first?.frame == Rect(x: 1968, y: 48, width: 960, height: 640))
        #expect(open(&desktop, "b", screen: 7).first?.screen == 1)
        #expect(open(&desktop, "c", screen: -3).first?.screen == 0)
        #expect(open(&desktop, "d").first?.screen == 0)
        // The requesting window's screen wins over the screen asked for.
        #expect(open(&desktop, "e", screen: 0, requesting: "a").first?.screen == 1)
        // An unknown requester is ignored.
        #expect(open(&desktop, "f", screen: 1, requesting: "ghost").first?.screen == 1)
    }

    @Test func halvesOnAnEmptyScreen() {
        var desktop = Desktop()
        let changed = open(&desktop, "a", placement: .left)
        #expect(changed.map(\.id) == ["a"])
        #expect(changed.first?.frame == Rect(x: 0, y: 0, width: 960, height: 1080))
        var other = Desktop()
        #expect(open(&other, "a", placement: .right).first?.frame == Rect(x: 960, y: 0, width: 960, height: 1080))
    }

    @Test func theWindowBeneathTakesTheOtherHalf() {
        var desktop = Desktop()
        open(&desktop, "a")
        open(&desktop, "b")
        let changed = open(&desktop, "c", placement: .right)
        #expect(changed.map(\.id) == ["c", "b"])
        #expect(desktop.windows["c"]?.frame == Rect(x: 960, y: 0, width: 960, height: 1080))
        #expect(desktop.windows["b"]?.frame == Rect(x: 0, y: 0, width: 960, height: 1080))
        #expect(desktop.windows["a"]?.frame == Rect(x: 48, y: 48, width: 960, height: 640))
        #expect(desktop.stack(onScreen: 0).map(\.id) == ["c", "b", "a"])
        // Left now: the window beneath (c) moves to the right half where it already is: not reported.
        let again = open(&desktop, "d", placement: .left)
        #expect(again.map(\.id) == ["d"])
        #expect(desktop.windows["d"]?.frame == Rect(x: 0, y: 0, width: 960, height: 1080))
    }

    @Test func theRequestingWindowTakesTheOtherHalf() {
        var desktop = Desktop(screenSizes: [Desktop.defaultScreenSize, Size(width: 1200, height: 800)])
        open(&desktop, "a", screen: 1)
        open(&desktop, "b", screen: 1)
        open(&desktop, "z", screen: 0)
        let changed = open(&desktop, "c", screen: 0, requesting: "a", placement: .left)
        #expect(changed.map(\.id) == ["c", "a"])
        #expect(desktop.windows["c"]?.frame == Rect(x: 1920, y: 0, width: 600, height: 800))
        #expect(desktop.windows["c"]?.screen == 1)
        #expect(desktop.windows["a"]?.frame == Rect(x: 2520, y: 0, width: 600, height: 800))
        // The front-most window of that screen (b) was not the one beneath: left alone.
        #expect(desktop.windows["b"]?.frame == Rect(x: 2000, y: 80, width: 960, height: 640))
        #expect(desktop.stack(onScreen: 1).first?.id == "c")
    }

    @Test func setFrameMovesBetweenScreens() throws {
        var desktop = Desktop(screenSizes: [Desktop.defaultScreenSize, Size(width: 1280, height: 1024)])
        open(&desktop, "a")
        // Centre (2100, 300) is on screen 1, though the window starts on screen 0.
        let result = desktop.setFrame("a", Rect(x: 1800, y: 100, width: 600, height: 400))
        let moved = try #require(result)
        #expect(moved.screen == 1)
        #expect(desktop.windows["a"]?.frame == Rect(x: 1800, y: 100, width: 600, height: 400))
        // Off every screen: the nearest (left of screen 0).
        #expect(desktop.setFrame("a", Rect(x: -5000, y: 10, width: 10, height: 10))?.screen == 0)
        // Far right, below screen 1: screen 1 is nearest.
        #expect(desktop.setFrame("a", Rect(x: 3000, y: 2000, width: 10, height: 10))?.screen == 1)
        // At least 1×1; non-finite values are made finite.
        #expect(desktop.setFrame("a", Rect(x: 10, y: 10, width: 0, height: -4))?.frame == Rect(x: 10, y: 10, width: 1, height: 1))
        #expect(desktop.setFrame("a", Rect(x: .nan, y: .infinity, width: 5, height: .nan))?.frame
                == Rect(x: 0, y: 0, width: 5, height: 1))
        #expect(desktop.setFrame("ghost", Rect(x: 0, y: 0, width: 5, height: 5)) == nil)
    }

    /// `placements()` gives each window the screen and place that `stack(onScreen:)` lists it at.
    @Test func placementsAgreeWithEachScreensStack() {
        var desktop = Desktop(screenSizes: [Size(width: 800, height: 600), Size(width: 1024, height: 768)])
        for (index, id) in ["a", "b", "c", "d", "e", "f"].enumerated() {
            desktop.insert(.init(id: id, appID: "org.example.A", frame: Rect(x: 0, y: 0, width: 10, height: 10),
                                 screen: index % 2, stackOrder: Int64(index + 1), isConnected: true))
        }
        desktop.bringToFront("a")
        var expected: [String: (screen: Int, index: Int)] = [:]
        for screen in desktop.screens {
            for (index, window) in desktop.stack(onScreen: screen.index).enumerated() { expected[window.id] = (screen.index, index) }
        }
        let placements = desktop.placements()
        #expect(placements.count == 6)
        for (id, place) in expected { #expect(placements[id]?.screen == place.screen && placements[id]?.index == place.index, "\(id)") }
        #expect(placements["a"]?.index == 0 && placements["f"]?.index == 0 && placements["b"]?.index == 2)
    }
}
