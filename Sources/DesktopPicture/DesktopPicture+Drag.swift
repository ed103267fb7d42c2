import FerryModel

extension DesktopPicture {
    /// A drag's path for the picture: every location in order with the proposal there, and how
    /// the drag ended (`org.ferry.DragManager1.LastDrag`).
    ///
    /// Drawn over everything: a polyline through the steps, a mark per step coloured by its
    /// proposal (cancel grey, forbidden red, copy green, move blue; a step where a drop would
    /// open a scene at a screen edge is a violet square), a ring round the drop point coloured by
    /// the outcome, and ``label`` beside it.
    public struct DragPath: Sendable, Hashable {
        /// One location of the drag.
        public struct Step: Sendable, Hashable {
            /// Where, in desktop coordinates.
            public var location: Point
            /// The proposal there.
            public var operation: DropOperation
            /// Whether a drop here would open a new scene at a screen edge.
            public var isEdge: Bool

            /// Makes a step.
            public init(location: Point, operation: DropOperation, isEdge: Bool = false) {
                self.location = location
                self.operation = operation
                self.isEdge = isEdge
            }
        }

        /// What a running drag shows under the pointer (its first item's preview): a title and/or
        /// a PNG image, drawn at the drag's last location.
        public struct Preview: Sendable, Hashable {
            /// The title; nil or empty for none. Cut at ``titleLimit`` characters.
            public var title: String?
            /// PNG bytes; nil for none. Scaled into a box of at most ``imageSide`` points a side.
            public var image: [UInt8]?

            /// Makes a preview.
            public init(title: String? = nil, image: [UInt8]? = nil) {
                self.title = title
                self.image = image
            }

            /// The longest title drawn.
            public static let titleLimit = 60
            /// The longest side of the box an image is drawn in, in points.
            public static let imageSide = 64.0
        }

        /// The locations in order: the beginning, each move, the drop.
        public var steps: [Step]
        /// How the drag ended; nil while it runs (the last step is then not marked as a drop).
        public var outcome: DropOperation?
        /// The text beside the drop point (or the last step), e.g. `drag 3: copy to Notes`; cut at
        /// ``labelLimit`` characters.
        public var label: String
        /// The preview drawn at the last location (layer class `drag-preview`), nil for none.
        public var preview: Preview?

        /// Makes a drag path.
        /// - Parameters:
        ///   - steps: the locations in order.
        ///   - outcome: how the drag ended, nil while it runs.
        ///   - label: the text beside the last location.
        ///   - preview: what the drag shows under the pointer, nil for none.
        public init(steps: [Step], outcome: DropOperation?, label: String, preview: Preview? = nil) {
            self.steps = steps
            self.outcome = outcome
            self.label = label
            self.preview = preview
        }

        /// The longest label drawn.
        public static let labelLimit = 100
    }
}

extension PictureStyle {
    /// The colour of a step's mark (and the drop ring) for a proposal.
    static func dragColor(for operation: DropOperation) -> PictureColor {
        switch operation {
        case .cancel: PictureColor(0x9AA0A6)
        case .forbidden: PictureColor(0xE5484D)
        case .copy: PictureColor(0x30A46C)
        case .move: PictureColor(0x3E8BFF)
        }
    }

    /// A step where a drop would open a scene at a screen edge.
    static let dragEdge = PictureColor(0xB45CF0)
    /// The path's dark casing and the marks' outline: visible on light scenes.
    static let dragCasing = PictureColor(0x14141A)
    /// The path itself: visible on the dark screens.
    static let dragLine = PictureColor(0xF4F4F4)
    static let dragMarkRadius = 8.0
    static let dropRingRadius = 15.0
    static let dragLabelBackground = PictureColor(0x14141A, alpha: 230)
    static let dragLabelText = PictureColor(0xFFFFFF)
    static let dragLabelSize = 13.0
    /// A preview's card: light, so that it reads as the dragged thing rather than a label.
    static let previewBackground = PictureColor(0xFFFFFF, alpha: 235)
    static let previewText = PictureColor(0x14141A)
    static let previewSize = 12.0
    /// Where an image is drawn whose pixels the PNG renderer cannot show.
    static let previewImagePlaceholder = PictureColor(0xD8DBE0)
}

extension DesktopPicture {
    /// The drag layer (class `drag`), nil when there is no drag or no step with finite coordinates.
    func dragLayer() -> PictureLayer? {
        guard let drag else { return nil }
        let steps = drag.steps.filter { $0.location.x.isFinite && $0.location.y.isFinite }
        guard let last = steps.last else { return nil }
        var shapes: [PictureShape] = []
        let points = steps.map(\.location)
        if points.count > 1 {
            shapes.append(.polyline(points, stroke: PictureStroke(color: PictureStyle.dragCasing, width: 7)))
            shapes.append(.polyline(points, stroke: PictureStroke(color: PictureStyle.dragLine, width: 3)))
        }
        let outline = PictureStroke(color: PictureStyle.dragCasing, width: 1.5)
        let radius = PictureStyle.dragMarkRadius
        for step in steps {
            if step.isEdge {
                let square = Rect(x: step.location.x - radius, y: step.location.y - radius, width: 2 * radius, height: 2 * radius)
                shapes.append(.rect(square, fill: PictureStyle.dragEdge, stroke: outline))
            } else {
                shapes.append(.circle(center: step.location, radius: radius, fill: PictureStyle.dragColor(for: step.operation),
                                      stroke: outline))
            }
        }
        if let outcome = drag.outcome {
            let ring = last.isEdge && outcome.transfersItems ? PictureStyle.dragEdge : PictureStyle.dragColor(for: outcome)
            shapes.append(.circle(center: last.location, radius: PictureStyle.dropRingRadius, fill: nil,
                                  stroke: PictureStroke(color: PictureStyle.dragCasing, width: 6)))
            shapes.append(.circle(center: last.location, radius: PictureStyle.dropRingRadius, fill: nil,
                                  stroke: PictureStroke(color: ring, width: 3)))
        }
        shapes += labelShapes(drag.label, near: last.location)
        return PictureLayer(kind: "drag", clip: nil, shapes: shapes)
    }

    /// The running drag's preview (class `drag-preview`) below and to the right of its last
    /// location, as a card: the image scaled into a box of at most
    /// ``DragPath/Preview/imageSide`` points (its aspect kept, from its header), the title under
    /// it; moved inside the picture's bounds. Nil when there is nothing to show.
    func dragPreviewLayer() -> PictureLayer? {
        guard let drag, let preview = drag.preview,
              let anchor = drag.steps.last(where: { $0.location.x.isFinite && $0.location.y.isFinite })?.location
        else { return nil }
        var title = (preview.title ?? "").printableLine()
        if title.count > DragPath.Preview.titleLimit { title = String(title.prefix(DragPath.Preview.titleLimit - 3)) + "..." }
        let side = DragPath.Preview.imageSide
        var imageSize: (width: Double, height: Double)?
        if let image = preview.image, let dimensions = ImageDimensions(header: image.prefix(64)) {
            let factor = side / Double(max(dimensions.width, dimensions.height))
            imageSize = (max(1, Double(dimensions.width) * factor), max(1, Double(dimensions.height) * factor))
        }
        guard !title.isEmpty || imageSize != nil else { return nil }
        let padding = PictureStyle.padding, size = PictureStyle.previewSize
        let titleWidth = title.isEmpty ? 0 : Double(title.count) * size * 0.95
        let titleHeight = title.isEmpty ? 0 : size + 8
        let width = max(titleWidth, imageSize?.width ?? 0) + 2 * padding
        let height = (imageSize?.height ?? 0) + titleHeight + 2 * padding + (imageSize != nil && !title.isEmpty ? 4 : 0)
        let bounds = self.bounds
        let gap = PictureStyle.dragMarkRadius + 4
        var x = anchor.x + gap, y = anchor.y + gap
        if x + width > bounds.maxX { x = anchor.x - gap - width }
        if y + height > bounds.maxY { y = anchor.y - gap - height }
        x = max(min(x, bounds.maxX - width), bounds.minX)
        y = max(min(y, bounds.maxY - height), bounds.minY)
        var shapes: [PictureShape] = [
            .rect(Rect(x: x, y: y, width: width, height: height), fill: PictureStyle.previewBackground,
                  stroke: PictureStroke(color: PictureStyle.dragCasing, width: 1.5)),
        ]
        var top = y + padding
        if let imageSize, let image = preview.image {
            let box = Rect(x: x + (width - imageSize.width) / 2, y: top, width: imageSize.width, height: imageSize.height)
            shapes.append(.image(box, png: image))
            top += imageSize.height + 4
        }
        if !title.isEmpty {
            shapes.append(.text(PictureText(string: title, x: x + padding, line: Rect(x: x, y: top, width: width, height: titleHeight),
                                            size: size, color: PictureStyle.previewText, bold: false)))
        }
        return PictureLayer(kind: "drag-preview", clip: nil, shapes: shapes)
    }

    /// A dark box with the label in it, above and to the right of `anchor`, moved inside the
    /// picture's bounds where it would stick out (also when `anchor` is far outside them).
    private func labelShapes(_ label: String, near anchor: Point) -> [PictureShape] {
        var text = label
        if text.count > DragPath.labelLimit { text = String(text.prefix(DragPath.labelLimit - 3)) + "..." }
        guard !text.isEmpty else { return [] }
        let bounds = self.bounds
        let size = PictureStyle.dragLabelSize, padding = PictureStyle.padding
        // Wide enough for the SVG's monospace font and the PNG's bitmap font at half scale.
        let width = Double(text.count) * size * 0.95 + 2 * padding, height = size + 10
        let gap = PictureStyle.dropRingRadius + 6
        var x = anchor.x + gap
        if x + width > bounds.maxX { x = anchor.x - gap - width }
        // A drop far outside the picture (a drag to --at 5000,5000) still shows its label, at the side.
        x = max(min(x, bounds.maxX - width), bounds.minX)
        var y = anchor.y - gap - height
        if y < bounds.minY { y = anchor.y + gap }
        y = max(min(y, bounds.maxY - height), bounds.minY)
        let box = Rect(x: x, y: y, width: width, height: height)
        return [
            .rect(box, fill: PictureStyle.dragLabelBackground, stroke: nil),
            .text(PictureText(string: text, x: x + padding, line: box, size: size, color: PictureStyle.dragLabelText, bold: true)),
        ]
    }
}
