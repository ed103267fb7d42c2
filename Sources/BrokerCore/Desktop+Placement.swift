import FerryModel

extension Desktop {
    /// Places a new window (front of its screen) and returns every window whose frame changed,
    /// the new one included (first).
    ///
    /// Screen: the requesting window's, else `screen` (clamped), else 0 — never the external
    /// display (screen 0 instead; see ``placeOnExternalDisplay(id:appID:)``). Without placement: a
    /// cascade 32 px right and down from the requesting window, else from the front-most window
    /// of that screen (connected or not), 960×640 clipped to the screen, the first at the screen's origin + (48, 48),
    /// wrapping back to + (48, 48) when it would leave the screen. With placement: that half of
    /// the screen (full height); the window beneath (the requesting one, else the front-most of
    /// that screen before insertion, if any) takes the other half.
    ///
    /// The new window is not connected (``setConnected(_:_:)`` once its scene connects). An
    /// existing window with the same identifier is replaced.
    /// - Parameters:
    ///   - id: the new session's persistent identifier.
    ///   - appID: its app.
    ///   - screen: the screen asked for, when no requesting window decides.
    ///   - requesting: the persistent identifier of the scene that asked; unknown ones are ignored.
    ///   - placement: the half to take, or nil to cascade.
    /// - Returns: the windows whose frames changed, the new one first.
    package mutating func placeNew(id: String, appID: String, screen: Int?, requesting: String?,
                                  placement: ScenePlacement?) -> [Window] {
        remove(id)
        let requester = requesting.flatMap { windows[$0] }.flatMap { screens[$0.screen].isExternal ? nil : $0 }
        var index = requester?.screen ?? min(max(screen ?? 0, 0), screens.count - 1)
        if screens[index].isExternal { index = 0 }
        let screenFrame = screens[index].frame
        let frontMost = frontMostWindow(onScreen: index)

        var changed: [Window] = []
        let frame: Rect
        if let placement {
            let half = screenFrame.size.width / 2
            let leftHalf = Rect(x: screenFrame.minX, y: screenFrame.minY, width: half, height: screenFrame.size.height)
            let rightHalf = Rect(x: screenFrame.minX + half, y: screenFrame.minY,
                                 width: screenFrame.size.width - half, height: screenFrame.size.height)
            frame = placement == .left ? leftHalf : rightHalf
            if let beneath = requester ?? frontMost {
                let other = placement == .left ? rightHalf : leftHalf
                if beneath.frame != other, let moved = setFrame(beneath.id, other) {
                    changed.append(moved)
                }
            }
        } else {
            frame = cascadeFrame(on: screenFrame, after: (requester ?? frontMost)?.frame)
        }
        let window = Window(id: id, appID: appID, frame: frame, screen: index, stackOrder: 0, isConnected: false)
        insertInFront(window)
        changed.insert(windows[id]!, at: 0)
        return changed
    }

    /// The external display, nil when the desktop has none.
    package var externalDisplay: Screen? { screens.last.flatMap { $0.isExternal ? $0 : nil } }

    /// Places a new window of the external-display role: in front on the external display,
    /// filling it. Returns the window, nil (nothing placed) when there is no external display.
    /// An existing window with the same identifier is replaced.
    package mutating func placeOnExternalDisplay(id: String, appID: String) -> Window? {
        guard let display = externalDisplay else { return nil }
        remove(id)
        insertInFront(Window(id: id, appID: appID, frame: display.frame, screen: display.index, stackOrder: 0,
                             isConnected: false))
        return windows[id]
    }

    /// The front-most window on a screen, connected or not.
    func frontMostWindow(onScreen index: Int) -> Window? {
        for position in stacking.indices.reversed() where stacking[position].screen == index {
            return stacking[position]
        }
        return nil
    }

    /// Where the next cascaded window goes on a screen whose front-most window is at `previous`.
    func cascadeFrame(on screen: Rect, after previous: Rect?) -> Rect {
        let size = Size(width: min(Desktop.newSceneSize.width, screen.size.width),
                        height: min(Desktop.newSceneSize.height, screen.size.height))
        let start = Point(x: screen.minX + Desktop.cascadeStart, y: screen.minY + Desktop.cascadeStart)
        var origin = start
        if let previous {
            origin = Point(x: previous.minX + Desktop.cascadeStep, y: previous.minY + Desktop.cascadeStep)
            let fits = origin.x >= screen.minX && origin.y >= screen.minY
                && origin.x + size.width <= screen.maxX && origin.y + size.height <= screen.maxY
            if !fits { origin = start }
        }
        // A screen too small for the start position: keep the window on it.
        origin.x = max(screen.minX, min(origin.x, screen.maxX - size.width))
        origin.y = max(screen.minY, min(origin.y, screen.maxY - size.height))
        return Rect(origin: origin, size: size)
    }
}
