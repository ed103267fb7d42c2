/// The broker's desktop model as a client sees it: the screens, left to right, and the width of
/// the zone along their edges where a drop opens a new scene.
///
/// D-Bus: the `Screens` and `EdgeZone` properties of `org.ferry.Scenes1`.
public struct DesktopLayout: Sendable, Hashable {
    /// The screens, left to right.
    public var screens: [DesktopScreen]
    /// The width in pixels of the edge zone along each screen's left and right edges.
    public var edgeZone: Double

    /// Makes a layout.
    public init(screens: [DesktopScreen], edgeZone: Double) {
        self.screens = screens
        self.edgeZone = edgeZone
    }

    /// Reads the properties of `org.ferry.Scenes1` (`Screens`, `EdgeZone`; others are ignored;
    /// absent ones read as no screens and a zone of 0).
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key at fault
    ///   (`properties.Screens[1].frame.width`).
    public init(wire: WireReader) throws {
        screens = try (wire.dictionaries("Screens") ?? []).map(DesktopScreen.init(wire:))
        edgeZone = try wire.double("EdgeZone") ?? 0
    }
}

/// One screen of the desktop model.
public struct DesktopScreen: Sendable, Hashable {
    /// Its place, left to right, from 0.
    public var index: Int
    /// Where it is in desktop coordinates.
    public var frame: Rect
    /// Whether it is the external display (scenes of the external-display role go there).
    public var isExternal: Bool

    /// Makes a screen.
    public init(index: Int, frame: Rect, isExternal: Bool = false) {
        self.index = index
        self.frame = frame
        self.isExternal = isExternal
    }

    /// Reads one screen: `index` and `frame` are required, `external` reads as false when absent
    /// (a broker before `org.ferry.Scenes1` Version 2).
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key at fault.
    public init(wire: WireReader) throws {
        index = Int(try wire.required("index", wire.int32))
        frame = try wire.required("frame") { try wire.decode(Rect.self, $0) }
        isExternal = try wire.bool("external") ?? false
    }
}

/// A scene session where the desktop model has it: the session, its screen and its place in
/// that screen's stack.
///
/// D-Bus: one entry of `org.ferry.Scenes1.ListSessions` (a SceneSession, docs/wire.md, with the
/// keys `screen` and `stackIndex`).
public struct DesktopScene: Sendable, Hashable {
    /// The session.
    public var session: SceneSession
    /// The index of its screen.
    public var screen: Int
    /// Its place in its screen's stack, 0 at the front.
    public var stackIndex: Int

    /// Makes an entry.
    public init(session: SceneSession, screen: Int = 0, stackIndex: Int = 0) {
        self.session = session
        self.screen = screen
        self.stackIndex = stackIndex
    }

    /// Reads one entry of the session list.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key at fault
    ///   (`sessions[2].frame.x`), as ``SceneSession/init(wireDictionary:)`` does.
    public init(wire: WireReader) throws {
        session = try wire.decodeHere(SceneSession.self)
        screen = Int(try wire.int32("screen") ?? 0)
        stackIndex = Int(try wire.int32("stackIndex") ?? 0)
    }
}
