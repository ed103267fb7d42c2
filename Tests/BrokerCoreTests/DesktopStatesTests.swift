import BrokerCore
import FerryModel
import Foundation
import Testing

@Suite("Desktop states and hit testing")
struct DesktopStatesTests {
    /// A desktop with windows given front-most last, all connected unless listed.
    func desktop(_ frames: [(String, Rect)], screens: [Size] = [Desktop.defaultScreenSize],
                 disconnected: Set<String> = []) -> Desktop {
        var desktop = Desktop(screenSizes: screens)
        for (order, (id, frame)) in frames.enumerated() {
            desktop.insert(.init(id: id, appID: "org.example.App", frame: frame, screen: 0, stackOrder: Int64(order + 1),
                                 isConnected: !disconnected.contains(id)))
            _ = desktop.setFrame(id, frame)
        }
        return desktop
    }

    @Test func frontMostIsActiveOthersInactive() {
        let model = desktop([("a", Rect(x: 0, y: 0, width: 500, height: 500)),
                             ("b", Rect(x: 100, y: 100, width: 500, height: 500)),
                             ("c", Rect(x: 200, y: 200, width: 500, height: 500))])
        #expect(model.derivedStates() == ["c": .foregroundActive, "b": .foregroundInactive, "a": .foregroundInactive])
    }

    @Test func aWindowCoveredByOneAboveIsInTheBackground() {
        var model = desktop([("small", Rect(x: 100, y: 100, width: 200, height: 200)),
                             ("big", Rect(x: 0, y: 0, width: 800, height: 600)),
                             ("front", Rect(x: 1000, y: 0, width: 300, height: 300))])
        #expect(model.derivedStates() == ["front": .foregroundActive, "big": .foregroundInactive, "small": .background])
        // Exactly the same frame counts as covered.
        _ = model.setFrame("small", Rect(x: 0, y: 0, width: 800, height: 600))
        #expect(model.derivedStates()["small"] == .background)
        // Sticking out by one point: visible.
        _ = model.setFrame("small", Rect(x: 0, y: 0, width: 801, height: 600))
        #expect(model.derivedStates()["small"] == .foregroundInactive)
        // Brought forward, it is active and covers big in turn.
        model.bringToFront("small")
        #expect(model.derivedStates() == ["small": .foregroundActive, "front": .foregroundInactive, "big": .background])
    }

    @Test func coverageByTwoWindowsTogetherDoesNotCount() {
        let model = desktop([("under", Rect(x: 0, y: 0, width: 400, height: 200)),
                             ("left", Rect(x: 0, y: 0, width: 200, height: 200)),
                             ("right", Rect(x: 200, y: 0, width: 200, height: 200))])
        #expect(model.derivedStates()["under"] == .foregroundInactive)
    }

    @Test func disconnectedWindowsAreUnattachedAndCoverNothing() {
        var model = desktop([("small", Rect(x: 100, y: 100, width: 200, height: 200)),
                             ("big", Rect(x: 0, y: 0, width: 800, height: 600))])
        model.setConnected("big", false)
        #expect(model.derivedStates() == ["big": .unattached, "small": .foregroundActive])
        model.setConnected("big", true)
        #expect(model.derivedStates() == ["big": .foregroundActive, "small": .background])
        model.setConnected("small", false)
        model.setConnected("ghost", true)
        #expect(model.derivedStates() == ["big": .foregroundActive, "small": .unattached])
    }

    @Test func eachScreenHasItsOwnActiveWindow() {
        var model = Desktop(screenSizes: [Desktop.defaultScreenSize, Desktop.defaultScreenSize])
        for (id, screen) in [("a", 0), ("b", 1), ("c", 0), ("d", 1)] {
            _ = model.placeNew(id: id, appID: "org.example.App", screen: screen, requesting: nil, placement: nil)
            model.setConnected(id, true)
        }
        #expect(model.derivedStates() == ["a": .foregroundInactive, "b": .foregroundInactive,
                                          "c": .foregroundActive, "d": .foregroundActive])
        // Moving d onto screen 0 (in front) leaves b active on screen 1.
        _ = model.setFrame("d", Rect(x: 100, y: 100, width: 300, height: 300))
        #expect(model.derivedStates() == ["a": .foregroundInactive, "b": .foregroundActive,
                                          "c": .foregroundInactive, "d": .foregroundActive])
    }

    @Test func hitTesting() {
        var model = Desktop(screenSizes: [Desktop.defaultScreenSize, Size(width: 1280, height: 1024)], edgeZone: 24)
        model.insert(.init(id: "back", appID: "org.example.A", frame: Rect(x: 0, y: 0, width: 1000, height: 1000),
                           screen: 0, stackOrder: 1, isConnected: true))
        model.insert(.init(id: "front", appID: "org.example.B", frame: Rect(x: 500, y: 500, width: 400, height: 400),
                           screen: 0, stackOrder: 2, isConnected: true))
        model.insert(.init(id: "ghost", appID: "org.example.C", frame: Rect(x: 0, y: 0, width: 1920, height: 1080),
                           screen: 0, stackOrder: 3, isConnected: false))
        #expect(model.window(at: Point(x: 600, y: 600))?.id == "front")
        #expect(model.window(at: Point(x: 100, y: 100))?.id == "back")
        #expect(model.window(at: Point(x: 1500, y: 100)) == nil)  // only the disconnected window is there
        #expect(model.window(at: Point(x: 900, y: 900))?.id == "back")  // right/bottom edges are exclusive

        #expect(model.screen(containing: Point(x: 0, y: 0))?.index == 0)
        #expect(model.screen(containing: Point(x: 1920, y: 0))?.index == 1)
        #expect(model.screen(containing: Point(x: 1919.5, y: 1079))?.index == 0)
        #expect(model.screen(containing: Point(x: 2000, y: 1050)) == nil)  // below the shorter screen 1
        #expect(model.screen(containing: Point(x: -1, y: 10)) == nil)

        #expect(model.edge(at: Point(x: 0, y: 500)) == .left)
        #expect(model.edge(at: Point(x: 23.9, y: 500)) == .left)
        #expect(model.edge(at: Point(x: 24, y: 500)) == nil)
        #expect(model.edge(at: Point(x: 1896, y: 500)) == .right)
        #expect(model.edge(at: Point(x: 1895.9, y: 500)) == nil)
        #expect(model.edge(at: Point(x: 1920, y: 500)) == .left)  // screen 1's left edge
        #expect(model.edge(at: Point(x: 3199, y: 500)) == .right)
        #expect(model.edge(at: Point(x: 3200, y: 500)) == nil)  // off every screen
        #expect(Desktop(edgeZone: 0).edge(at: Point(x: 0, y: 0)) == nil)
    }

    /// P7's shape: 200 apps × 5 scenes on one screen.
    @Test func thousandWindowsStayFast() {
        var model = Desktop()
        let clock = ContinuousClock()
        let placing = clock.measure {
            for app in 0..<200 {
                for scene in 0..<5 {
                    let id = "s\(app)-\(scene)"
                    _ = model.placeNew(id: id, appID: "org.example.App\(app)", screen: nil, requesting: nil,
                                       placement: scene == 4 ? .left : nil)
                    model.setConnected(id, true)
                }
            }
        }
        var states: [String: SceneActivationState] = [:]
        let deriving = clock.measure {
            for _ in 0..<10 { states = model.derivedStates() }
        }
        #expect(states.count == 1000)
        #expect(states.values.filter { $0 == .foregroundActive }.count == 1)
        #expect(states.values.contains(.background))
        // Generous bounds for unoptimized debug builds on a busy machine; release is far faster.
        #expect(placing < .seconds(2), "placing 1000 windows took \(placing)")
        #expect(deriving / 10 < .milliseconds(100), "deriving states took \(deriving / 10) per call")
        print("Desktop: 1000 placeNew in \(placing), derivedStates \(deriving / 10) per call")
    }
}
