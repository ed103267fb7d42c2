import FerryModel

/// A picture of the desktop: its screens with their edge zones, and the scenes on them, back to
/// front. Drawn as SVG (``svg()``) or as PNG (``png(scale:)``), both deterministic.
///
/// Each scene shows a title bar with "App — title", its configuration name and its activation
/// state: foregroundActive strong (blue title bar, thick outline), foregroundInactive normal,
/// background faded, unattached ghosted (see-through: a dashed outline and a faint title bar).
/// The left and right edge zones of every screen — where a drop opens a new scene — are shaded
/// bands over everything. The last drag's path (``drag``), when there is one, is drawn on top.
public struct DesktopPicture: Sendable {
    /// One scene to draw.
    public struct Scene: Sendable, Hashable {
        /// The scene's frame in desktop coordinates.
        public var frame: Rect
        /// The app's name as shown in the title bar (a bundle identifier will do).
        public var appName: String
        /// The window title; empty for none.
        public var title: String
        /// The configuration the app chose for the scene; empty when not known.
        public var configuration: String
        /// The scene's activation state, shown by its colours and outline.
        public var state: SceneActivationState

        /// Makes a scene.
        public init(frame: Rect, appName: String, title: String, configuration: String, state: SceneActivationState) {
            self.frame = frame
            self.appName = appName
            self.title = title
            self.configuration = configuration
            self.state = state
        }

        /// Makes a scene from a session: its frame (zero when unknown), title, configuration
        /// name and activation state; `appName` defaults to the session's bundle identifier.
        public init(session: SceneSession, appName: String? = nil) {
            self.init(frame: session.frame ?? .zero, appName: appName ?? session.bundleIdentifier,
                      title: session.title ?? "", configuration: session.configurationName ?? "",
                      state: session.activationState)
        }

        /// The title bar's text: "App — title", or the title alone when it already starts with
        /// the app's name, or the app's name alone when there is no title.
        public var caption: String {
            if title.isEmpty { return appName }
            if appName.isEmpty || title == appName || title.hasPrefix(appName + " ") { return title }
            return appName + " — " + title
        }
    }

    /// The screens' frames in desktop coordinates.
    public var screens: [Rect]
    /// The indexes (in ``screens``) of external displays: labelled so, drawn without edge zones.
    public var externalScreens: Set<Int>
    /// The width of each screen's left and right edge zones, in points.
    public var edgeZone: Double
    /// The scenes, back to front (drawing order).
    public var scenes: [Scene]
    /// A drag's path drawn over everything (``DragPath``), nil for none.
    public var drag: DragPath?

    /// Makes a picture.
    /// - Parameters:
    ///   - screens: the screens' frames in desktop coordinates.
    ///   - externalScreens: which of them are external displays (no edge zones).
    ///   - edgeZone: the width of each screen's left and right edge zones.
    ///   - scenes: the scenes, back to front.
    ///   - drag: a drag's path to draw over everything, nil for none.
    public init(screens: [Rect], externalScreens: Set<Int> = [], edgeZone: Double, scenes: [Scene], drag: DragPath? = nil) {
        self.screens = screens
        self.externalScreens = externalScreens
        self.edgeZone = edgeZone
        self.scenes = scenes
        self.drag = drag
    }

    /// The part of the desktop drawn: the smallest rectangle holding every screen (every scene
    /// when there is no screen; a 1×1 square at the origin when there is neither). Rectangles
    /// with a non-finite coordinate or no area are left out.
    public var bounds: Rect {
        let usable = { (rect: Rect) in
            rect.minX.isFinite && rect.minY.isFinite && rect.maxX.isFinite && rect.maxY.isFinite && !rect.isEmpty
        }
        var rects = screens.filter(usable)
        if rects.isEmpty { rects = scenes.map(\.frame).filter(usable) }
        guard let first = rects.first else { return Rect(x: 0, y: 0, width: 1, height: 1) }
        var x0 = first.minX, y0 = first.minY, x1 = first.maxX, y1 = first.maxY
        for rect in rects.dropFirst() {
            x0 = min(x0, rect.minX); y0 = min(y0, rect.minY)
            x1 = max(x1, rect.maxX); y1 = max(y1, rect.maxY)
        }
        return Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}
