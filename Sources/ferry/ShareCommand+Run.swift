import ArgumentParser
import Ferry
import FerryModel
import FerryTerminal

extension ShareCommand {
    func run() async throws {
        let performed = try activity.map { try Self.activityType($0, option: "--activity") }
        let options = ShareOptions(excludedActivityTypes: try exclude.map { try Self.activityType($0, option: "--exclude") })
        let folder = try to.map(Self.folder)
        if from == nil, text == nil, files.isEmpty, LinuxCalls.isTerminal(0) {
            // Nothing named and nothing piped: reading the terminal would look like a hang.
            throw CLIFailure(.usage, "nothing to share: give FILE…, --text S or --from APP, or pipe data to standard input "
                             + "('-' reads the terminal)")
        }
        let items = from == nil ? try readItems() : []
        let client = try await bus.connect()
        let session = try await begin(on: client, items: items, options: options)
        let report = ShareReport(json: json, share: session.id)
        guard let performed else {
            do {
                try writeOut(try report.list(try await session.activities()))
            } catch {
                try? await session.end()
                throw error
            }
            try? await session.end()
            return
        }
        let completion: ShareCompletion
        do {
            completion = try await session.perform(performed, folder: folder)
        } catch {
            // NotFound or InvalidArgument leave the share running.
            try? await session.end()
            guard error.code == .notFound else { throw error }
            // The broker's text names the share's number, which means nothing here.
            throw CLIFailure(.notFound, "\(performed) is not an activity for these items: unknown, excluded or not "
                             + "accepting them (--list lists the ones that can)")
        }
        try writeOut(try report.completion(completion))
        let status = ShareReport.status(of: completion)
        if status != .success { throw ExitCode(status.rawValue) }
    }

    /// Begins the share: the `--from` scene's items (its app provides them), or `items`, which
    /// this process writes — registered as a command-line tool first when one is large enough
    /// to be promised, so it serves those bytes itself while the share runs.
    /// - Throws: `CLIFailure` for an unknown or unconnected `--from` scene; `FerryError` from
    ///   the broker (nothing to share, the scene's app's timeout, …).
    private func begin(on client: FerryClient, items: [CopyItem], options: ShareOptions) async throws -> ShareSession {
        if let from {
            let broker = SceneCommand.Broker(client: client)
            let scene = try DragRun.scene(try await broker.resolve(from), among: try await broker.sessions())
            return try await client.beginShare(scene: scene.persistentIdentifier, options: options)
        }
        if items.contains(where: \.needsPromises) { try await client.registerCommandLineTool() }
        return try await client.beginShare(try items.map { try $0.provider(lazy: false) }, options: options)
    }
}
