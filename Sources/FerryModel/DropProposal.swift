/// What a drop would do (UIDropOperation): the answer a drop target gives while a drag is over
/// it, and how a drag ends.
public enum DropOperation: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Nothing happens: no target here, or the drag was cancelled.
    case cancel
    /// A target is here but refuses these items (the user sees that a drop is not allowed).
    case forbidden
    /// The target gets a copy; the source keeps its original.
    case copy
    /// The target takes the items and the source removes its original; only inside one app.
    case move

    /// The wire name (`cancel`, `forbidden`, `copy`, `move`).
    public var name: String { rawValue }

    /// The operation named `name`, nil for an unknown name.
    public init?(name: String) { self.init(rawValue: name) }

    /// Whether a drop with this operation transfers the items (copy or move).
    public var transfersItems: Bool { self == .copy || self == .move }

    /// The wire name.
    public var description: String { rawValue }
}

/// A drop target's answer to a drag over it (UIDropProposal).
public struct DropProposal: Sendable, Hashable, CustomStringConvertible {
    /// What a drop here would do.
    public var operation: DropOperation
    /// Whether the target wants precise placement (UIDropProposal.isPrecise).
    public var isPrecise: Bool

    /// Makes a proposal.
    public init(operation: DropOperation, isPrecise: Bool = false) {
        self.operation = operation
        self.isPrecise = isPrecise
    }

    /// `cancel`: nothing accepts here.
    public static let cancel = DropProposal(operation: .cancel)
    /// `forbidden`: refused.
    public static let forbidden = DropProposal(operation: .forbidden)
    /// `copy`.
    public static let copy = DropProposal(operation: .copy)
    /// `move`.
    public static let move = DropProposal(operation: .move)

    /// The proposal as a drag that may or may not move, and crosses apps or not, delivers it:
    /// a move becomes a copy across apps or when the drag does not allow moving.
    public func delivered(allowsMove: Bool) -> DropProposal {
        guard operation == .move, !allowsMove else { return self }
        return DropProposal(operation: .copy, isPrecise: isPrecise)
    }

    /// `copy` or `copy (precise)`.
    public var description: String { isPrecise ? "\(operation) (precise)" : operation.rawValue }
}
