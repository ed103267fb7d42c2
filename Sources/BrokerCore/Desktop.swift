import FerryModel

/// One screen of the desktop: the model's value that clients read back from `Screens`
/// (origin top-left, y grows downwards; an external display takes only scenes of the
/// external-display role, and nothing on it takes drops, pastes or edge drops).
package typealias Screen = DesktopScreen

/// The broker's model of the desktop: screens side by side, and one window per scene session
/// with its frame, screen and place in the stacking order.
///
/// A value type without I/O: the scene service keeps one, mutates it for every request and
/// persists the windows' frames and stacking through ``SceneStore``. Stack orders are unique;
/// a larger one is nearer the front. Activation states follow from the model through
/// ``derivedStates()``.
package struct Desktop: Sendable {
    /// The size of the one screen a default desktop has.
    package static let defaultScreenSize = Size(width: 1920, height: 1080)
    /// How wide the zones along each screen's left and right edges are, by default.
    package static let defaultEdgeZone = 24.0
    /// The size of a new cascaded window (clipped to its screen).
    package static let newSceneSize = Size(width: 960, height: 640)
    /// How far each cascaded window is moved right and down from the one before.
    package static let cascadeStep = 32.0
    /// Where the first cascaded window of a screen goes, from the screen's top-left corner.
    package static let cascadeStart = 48.0
    /// The largest stack order ``insert(_:)`` keeps (so that new ones never overflow).
    package static let largestRestoredStackOrder = Int64.max / 2
    /// The largest coordinate or length a frame may have; larger values are clamped.
    package static let coordinateLimit = 10_000_000.0

    /// The screens, left to right; never empty.
    package private(set) var screens: [Screen]
    /// How wide the zones along each screen's left and right edges are (``edge(at:)``).
    package let edgeZone: Double

    /// A scene's window.
    package struct Window: Sendable, Hashable {
        /// The scene session's persistent identifier.
        package var id: String
        /// The app the scene belongs to.
        package var appID: String
        /// Where the window is, in desktop coordinates.
        package var frame: Rect
        /// The index of the screen the window is on.
        package var screen: Int
        /// The window's place in the stacking order: larger is nearer the front; unique.
        package var stackOrder: Int64
        /// Whether its app is running and the scene is connected.
        package var isConnected: Bool

        /// Makes a window.
        package init(id: String, appID: String, frame: Rect, screen: Int, stackOrder: Int64, isConnected: Bool) {
            self.id = id
            self.appID = appID
            self.frame = frame
            self.screen = screen
            self.stackOrder = stackOrder
            self.isConnected = isConnected
        }
    }

    /// Every window, by persistent identifier.
    package private(set) var windows: [String: Window]
    /// The same windows, back to front (ascending stack order): the stacking order without
    /// sorting, and a flat array the hit tests and ``derivedStates()`` scan cheaply.
    private(set) var stacking: [Window] = []
    /// The next stack order to hand out: above every window.
    private var nextStackOrder: Int64 = 1

    /// Screens laid out left to right from (0, 0), top edges aligned.
    ///
    /// An empty list means one screen of ``defaultScreenSize``. Lengths that are not finite and
    /// positive take the default's; lengths are clamped to ``coordinateLimit`` (validate input
    /// first with ``validate(screenSizes:edgeZone:)`` to report it instead).
    /// - Parameters:
    ///   - screenSizes: each screen's size, left to right.
    ///   - edgeZone: how wide the edge zones are; negative or non-finite values mean 0.
    ///   - externalDisplay: the size of an external display, the right-most screen, or nil for none.
    package init(screenSizes: [Size] = [defaultScreenSize], edgeZone: Double = defaultEdgeZone,
                externalDisplay: Size? = nil) {
        let sizes = screenSizes.isEmpty ? [Desktop.defaultScreenSize] : screenSizes
        var x = 0.0
        var screens: [Screen] = []
        for (index, size) in (sizes + (externalDisplay.map { [$0] } ?? [])).enumerated() {
            let width = Desktop.sanitizedLength(size.width, default: Desktop.defaultScreenSize.width)
            let height = Desktop.sanitizedLength(size.height, default: Desktop.defaultScreenSize.height)
            screens.append(Screen(index: index, frame: Rect(x: x, y: 0, width: width, height: height),
                                  isExternal: index == sizes.count))
            x += width
        }
        self.screens = screens
        self.edgeZone = edgeZone.isFinite && edgeZone > 0 ? edgeZone : 0
        self.windows = [:]
    }

    /// Checks screen sizes and an edge zone as ``init(screenSizes:edgeZone:)`` takes them.
    /// - Throws: `FerryModelError` `.invalidArgument` for no screens, a length that is not a
    ///   finite positive number up to ``coordinateLimit``, or a negative edge zone.
    package static func validate(screenSizes: [Size], edgeZone: Double) throws {
        guard !screenSizes.isEmpty else { throw FerryModelError(.invalidArgument, "the desktop needs a screen") }
        for (index, size) in screenSizes.enumerated() {
            for length in [size.width, size.height] where !(length.isFinite && length >= 1 && length <= coordinateLimit) {
                throw FerryModelError(.invalidArgument, "screen \(index): \(size) is not a valid screen size",
                                      keyPath: "screens[\(index)]")
            }
        }
        guard edgeZone.isFinite, edgeZone >= 0 else {
            throw FerryModelError(.invalidArgument, "the edge zone must be a length of 0 or more")
        }
    }

    private static func sanitizedLength(_ length: Double, default fallback: Double) -> Double {
        guard length.isFinite, length > 0 else { return fallback }
        return min(max(length, 1), coordinateLimit)
    }

    // MARK: - Windows

    /// Adds a window as it was stored (or replaces the one with its identifier).
    ///
    /// Its screen index is clamped to the screens there are, its frame made finite and at
    /// least 1×1; a frame that does not overlap that screen (the desktop had more or larger
    /// screens when it was stored) is moved onto it, clipped to its size. Its screen then becomes
    /// the one containing the frame's centre, as ``setFrame(_:_:)`` keeps it (it differs from
    /// the stored one only when the screens changed size). A stack order another window already
    /// holds, or one above ``largestRestoredStackOrder``, is replaced by one in front of every
    /// window.
    package mutating func insert(_ window: Window) {
        remove(window.id)
        var window = window
        window.screen = min(max(window.screen, 0), screens.count - 1)
        window.frame = Desktop.sanitized(window.frame)
        let screenFrame = screens[window.screen].frame
        if window.frame.intersection(screenFrame) == nil {
            let width = min(window.frame.size.width, screenFrame.size.width)
            let height = min(window.frame.size.height, screenFrame.size.height)
            window.frame = Rect(x: min(max(window.frame.minX, screenFrame.minX), screenFrame.maxX - width),
                                y: min(max(window.frame.minY, screenFrame.minY), screenFrame.maxY - height),
                                width: width, height: height)
        }
        if screens[window.screen].isExternal {
            window.frame = screenFrame
        } else {
            window.screen = nearestScreen(to: Point(x: window.frame.midX, y: window.frame.midY)).index
        }
        var position = insertionPoint(of: window.stackOrder)
        if window.stackOrder > Desktop.largestRestoredStackOrder
            || (position < stacking.count && stacking[position].stackOrder == window.stackOrder) {
            window.stackOrder = takeStackOrder()
            position = stacking.count
        }
        if window.stackOrder >= nextStackOrder { nextStackOrder = window.stackOrder &+ 1 }
        stacking.insert(window, at: position)
        windows[window.id] = window
    }

    /// Forgets a window; unknown identifiers are ignored.
    package mutating func remove(_ id: String) {
        guard let window = windows.removeValue(forKey: id) else { return }
        stacking.remove(at: position(of: window))
    }

    /// Marks a window connected (its app shows the scene) or not; unknown identifiers are ignored.
    package mutating func setConnected(_ id: String, _ connected: Bool) {
        guard let window = windows[id], window.isConnected != connected else { return }
        windows[id]!.isConnected = connected
        stacking[position(of: window)].isConnected = connected
    }

    /// Moves a window in front of every other window; unknown identifiers are ignored.
    package mutating func bringToFront(_ id: String) {
        guard var window = windows[id], stacking.last?.id != id else { return }
        stacking.remove(at: position(of: window))
        window.stackOrder = takeStackOrder()
        stacking.append(window)
        windows[id] = window
    }

    /// Sets a window's frame (at least 1×1); its screen becomes the one containing the frame's
    /// centre (else the nearest), never the external display. A window on the external display
    /// keeps filling it. Returns the updated window, nil when unknown.
    ///
    /// Coordinates that are not finite become 0 and lengths are clamped to 1…``coordinateLimit``.
    package mutating func setFrame(_ id: String, _ frame: Rect) -> Window? {
        guard var window = windows[id] else { return nil }
        if screens[window.screen].isExternal { return window }
        let position = position(of: window)
        window.frame = Desktop.sanitized(frame)
        let centre = Point(x: window.frame.midX, y: window.frame.midY)
        window.screen = nearestScreen(to: centre).index
        if screen(containing: centre)?.isExternal == true {
            // Not onto the external display: onto the nearest other screen, clipped to it.
            let onto = screens[window.screen].frame
            let width = min(window.frame.size.width, onto.size.width), height = min(window.frame.size.height, onto.size.height)
            window.frame = Rect(x: min(max(window.frame.minX, onto.minX), onto.maxX - width),
                                y: min(max(window.frame.minY, onto.minY), onto.maxY - height), width: width, height: height)
        }
        windows[id] = window
        stacking[position] = window
        return window
    }

    /// The windows on a screen, front to back (empty for an unknown screen).
    package func stack(onScreen index: Int) -> [Window] {
        var out: [Window] = []
        for position in stacking.indices.reversed() where stacking[position].screen == index {
            out.append(stacking[position])
        }
        return out
    }

    /// Each window's screen and place on it (0 = front, as in ``stack(onScreen:)``), by window
    /// id, from one pass over the stacking order.
    package func placements() -> [String: (screen: Int, index: Int)] {
        var placements: [String: (screen: Int, index: Int)] = [:]
        placements.reserveCapacity(stacking.count)
        var nextIndex = [Int](repeating: 0, count: screens.count)
        for position in stacking.indices.reversed() {
            let screen = stacking[position].screen
            guard nextIndex.indices.contains(screen) else { continue }
            placements[stacking[position].id] = (screen, nextIndex[screen])
            nextIndex[screen] += 1
        }
        return placements
    }

    /// Adds a new window in front of every other (its stack order is replaced).
    mutating func insertInFront(_ window: Window) {
        remove(window.id)
        var window = window
        window.screen = min(max(window.screen, 0), screens.count - 1)
        window.stackOrder = takeStackOrder()
        stacking.append(window)
        windows[window.id] = window
    }

    /// The first position in ``stacking`` whose stack order is not below `order`.
    private func insertionPoint(of order: Int64) -> Int {
        var low = 0, high = stacking.count
        while low < high {
            let middle = (low + high) / 2
            if stacking[middle].stackOrder < order { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Where a window in ``windows`` is in ``stacking``.
    private func position(of window: Window) -> Int {
        let position = insertionPoint(of: window.stackOrder)
        precondition(position < stacking.count && stacking[position].id == window.id, "the stacking is out of step")
        return position
    }

    /// A stack order in front of every window.
    private mutating func takeStackOrder() -> Int64 {
        let order = nextStackOrder
        nextStackOrder &+= 1
        return order
    }

    /// A frame with finite coordinates and lengths of 1…``coordinateLimit``.
    static func sanitized(_ frame: Rect) -> Rect {
        func coordinate(_ value: Double) -> Double {
            value.isFinite ? min(max(value, -coordinateLimit), coordinateLimit) : 0
        }
        func length(_ value: Double) -> Double {
            value.isFinite ? min(max(value, 1), coordinateLimit) : 1
        }
        return Rect(x: coordinate(frame.minX), y: coordinate(frame.minY),
                    width: length(frame.size.width), height: length(frame.size.height))
    }
}
