import FerryModel

/// The picture's look: one place for colours and sizes, shared by the SVG and PNG renderers.
enum PictureStyle {
    static let background = PictureColor(0x1E1E24)
    static let screenFill = PictureColor(0x3A4A5C)
    static let screenStroke = PictureStroke(color: PictureColor(0x8899AA), width: 2)
    static let screenLabel = PictureColor(0xAAB8C8)
    static let edgeZone = PictureColor(0xFFAA00, alpha: 89)   // about 35 %

    static let titleBarHeight = 24.0
    static let titleSize = 13.0
    static let bodySize = 13.0
    static let stateSize = 11.0
    static let padding = 8.0

    /// Colours and outline of a scene in a given activation state.
    struct SceneLook {
        /// nil: see-through (an unattached scene is an outline).
        var body: PictureColor?
        var titleBar: PictureColor
        var titleText: PictureColor
        var bodyText: PictureColor
        var stroke: PictureStroke
    }

    static func look(for state: SceneActivationState) -> SceneLook {
        switch state {
        case .foregroundActive:
            SceneLook(body: PictureColor(0xFFFFFF), titleBar: PictureColor(0x2F6FDF), titleText: PictureColor(0xFFFFFF),
                      bodyText: PictureColor(0x1A1A1A), stroke: PictureStroke(color: PictureColor(0x2F6FDF), width: 4))
        case .foregroundInactive:
            SceneLook(body: PictureColor(0xEEF0F2), titleBar: PictureColor(0x9AA4B0), titleText: PictureColor(0x1A1A1A),
                      bodyText: PictureColor(0x1A1A1A), stroke: PictureStroke(color: PictureColor(0x6B7580), width: 2))
        case .background:
            SceneLook(body: PictureColor(0xA9B1BA), titleBar: PictureColor(0x8A939D), titleText: PictureColor(0x4A535D),
                      bodyText: PictureColor(0x4A535D), stroke: PictureStroke(color: PictureColor(0x7A838D), width: 2))
        case .unattached:
            SceneLook(body: nil, titleBar: PictureColor(0xFFFFFF, alpha: 38),
                      titleText: PictureColor(0x98A4B0), bodyText: PictureColor(0x98A4B0),
                      stroke: PictureStroke(color: PictureColor(0x98A4B0), width: 2, dash: [8, 6]))
        }
    }
}

extension DesktopPicture {
    /// What to draw, in order: the background, the screens, the scenes back to front, then the
    /// edge zones over everything, then the drag's path (``dragLayer()``) and a running drag's
    /// preview (``dragPreviewLayer()``) on top.
    func layers() -> [PictureLayer] {
        let bounds = self.bounds
        var layers = [PictureLayer(kind: "background", clip: nil,
                                   shapes: [.rect(bounds, fill: PictureStyle.background, stroke: nil)])]
        for (index, screen) in screens.enumerated() {
            layers.append(screenLayer(index: index, frame: screen))
        }
        for scene in scenes {
            layers.append(sceneLayer(scene))
        }
        var zones: [PictureShape] = []
        for (index, screen) in screens.enumerated() where !externalScreens.contains(index) {
            let width = zoneWidth(on: screen)
            guard width > 0 else { continue }
            zones.append(.rect(Rect(x: screen.minX, y: screen.minY, width: width, height: screen.size.height),
                               fill: PictureStyle.edgeZone, stroke: nil))
            zones.append(.rect(Rect(x: screen.maxX - width, y: screen.minY, width: width, height: screen.size.height),
                               fill: PictureStyle.edgeZone, stroke: nil))
        }
        if !zones.isEmpty { layers.append(PictureLayer(kind: "edge-zones", clip: nil, shapes: zones)) }
        if let drag = dragLayer() { layers.append(drag) }
        if let preview = dragPreviewLayer() { layers.append(preview) }
        return layers
    }

    /// The edge zone's width on a screen: `edgeZone`, at most half the screen, 0 when not positive.
    func zoneWidth(on screen: Rect) -> Double {
        guard edgeZone.isFinite, edgeZone > 0, screen.size.width.isFinite, screen.size.width > 0 else { return 0 }
        return min(edgeZone, screen.size.width / 2)
    }

    private func screenLayer(index: Int, frame: Rect) -> PictureLayer {
        let external = externalScreens.contains(index)
        let label = "Screen \(index)\(external ? " · external display" : "") · "
            + "\(Self.integerText(frame.size.width))×\(Self.integerText(frame.size.height))"
        let x = frame.minX + (external ? 0 : zoneWidth(on: frame)) + PictureStyle.padding
        let line = Rect(x: frame.minX, y: frame.maxY - 28, width: frame.size.width, height: 20)
        return PictureLayer(kind: "screen", clip: frame, shapes: [
            .rect(frame, fill: PictureStyle.screenFill, stroke: PictureStyle.screenStroke),
            .text(PictureText(string: label, x: x, line: line, size: PictureStyle.bodySize, color: PictureStyle.screenLabel)),
        ])
    }

    private func sceneLayer(_ scene: Scene) -> PictureLayer {
        let look = PictureStyle.look(for: scene.state)
        let frame = scene.frame
        let barHeight = min(PictureStyle.titleBarHeight, max(frame.size.height, 0))
        let bar = Rect(x: frame.minX, y: frame.minY, width: frame.size.width, height: barHeight)
        let x = frame.minX + PictureStyle.padding
        var shapes: [PictureShape] = []
        if let body = look.body { shapes.append(.rect(frame, fill: body, stroke: nil)) }
        shapes.append(.rect(bar, fill: look.titleBar, stroke: nil))
        shapes.append(.text(PictureText(string: scene.caption, x: x, line: bar, size: PictureStyle.titleSize,
                                        color: look.titleText, bold: scene.state == .foregroundActive)))
        let bodyTop = frame.minY + barHeight + 6
        if !scene.configuration.isEmpty {
            shapes.append(.text(PictureText(string: scene.configuration, x: x,
                                            line: Rect(x: frame.minX, y: bodyTop, width: frame.size.width, height: 20),
                                            size: PictureStyle.bodySize, color: look.bodyText, bold: true)))
        }
        shapes.append(.text(PictureText(string: scene.state.name, x: x,
                                        line: Rect(x: frame.minX, y: bodyTop + 20, width: frame.size.width, height: 18),
                                        size: PictureStyle.stateSize, color: look.bodyText)))
        shapes.append(.rect(frame, fill: nil, stroke: look.stroke))
        return PictureLayer(kind: "scene " + scene.state.name, clip: frame, shapes: shapes)
    }

    /// `1920` for 1920.0; other values rounded to an integer too (labels only).
    static func integerText(_ value: Double) -> String {
        guard value.isFinite, abs(value) < 1e15 else { return "?" }
        return String(Int64(value.rounded()))
    }
}
