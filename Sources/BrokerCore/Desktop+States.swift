import FerryModel

extension Desktop {
    /// The state every window should have: connected windows per screen front to back: the
    /// first foregroundActive, the others foregroundInactive, or background when one single
    /// connected window above covers the frame entirely; windows not connected: unattached.
    ///
    /// Cost: one pass over the stacking order, and for each connected window a scan of the
    /// connected windows above it on its screen (stopping at the first that covers it).
    package func derivedStates() -> [String: SceneActivationState] {
        var states: [String: SceneActivationState] = [:]
        states.reserveCapacity(stacking.count)
        // Per screen, the connected windows seen so far (all above the current one), as
        // (minX, minY, -maxX, -maxY): one covers a frame when it is <= the frame's, lane by lane.
        var above: [[SIMD4<Double>]] = Array(repeating: [], count: screens.count)
        for position in stacking.indices.reversed() {
            let window = stacking[position]
            guard window.isConnected else {
                states[window.id] = .unattached
                continue
            }
            let frame = window.frame
            let key = SIMD4(frame.minX, frame.minY, -frame.maxX, -frame.maxY)
            let state: SceneActivationState
            if above[window.screen].isEmpty {
                state = .foregroundActive
            } else {
                state = above[window.screen].contains { all($0 .<= key) } ? .background : .foregroundInactive
            }
            states[window.id] = state
            above[window.screen].append(key)
        }
        return states
    }

    // MARK: - Hit testing

    /// The screen containing a point (left and top edges inclusive), or nil off every screen.
    package func screen(containing point: Point) -> Screen? {
        screens.first { $0.frame.contains(point) }
    }

    /// The front-most connected window containing a point, or nil.
    package func window(at point: Point) -> Window? {
        for position in stacking.indices.reversed()
        where stacking[position].isConnected && stacking[position].frame.contains(point) {
            return stacking[position]
        }
        return nil
    }

    /// Whether a point is in the zone along the left or right edge of the screen containing it
    /// (``edgeZone`` wide): `.left`, `.right`, or nil elsewhere or off every screen.
    package func edge(at point: Point) -> ScenePlacement? {
        guard edgeZone > 0, let screen = screen(containing: point), !screen.isExternal else { return nil }
        if point.x < screen.frame.minX + edgeZone { return .left }
        if point.x >= screen.frame.maxX - edgeZone { return .right }
        return nil
    }

    /// The screen containing a point, else the one nearest to it; never the external display
    /// (a window placed or moved by frame does not go there).
    package func nearestScreen(to point: Point) -> Screen {
        if let screen = screen(containing: point), !screen.isExternal { return screen }
        var best = screens[0]
        var bestDistance = Double.infinity
        for screen in screens where !screen.isExternal {
            let frame = screen.frame
            let dx = max(frame.minX - point.x, 0, point.x - frame.maxX)
            let dy = max(frame.minY - point.y, 0, point.y - frame.maxY)
            let distance = dx * dx + dy * dy
            if distance < bestDistance {
                best = screen
                bestDistance = distance
            }
        }
        return best
    }
}
