import ArgumentParser
import FerryModel

@main
struct Ferry: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ferry", abstract: "Move items between apps.")
}
