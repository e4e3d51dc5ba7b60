import ArgumentParser
import Foundation
import Stasis
@_spi(Plumbing) import StasisCloud

struct Cloud: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Sync a save folder's slots with a stasis-server: login, status, push, pull, log, resolve.",
    discussion: """
      Example:
        stasis cloud login --server http://127.0.0.1:8080 --token-file alice.token
        stasis cloud status
        stasis cloud pull autosave
        stasis cloud resolve autosave --take merge

      Exit codes: 0 done; 1 a conflict, a refused token or a refused file; 64 usage; 74 the server or a file could not be reached.
      """,
    subcommands: [Login.self, Status.self, Push.self, Pull.self, Log.self, Resolve.self, Release.self, Discard.self]
  )
}

/// What every cloud command but `login` takes: the save folder, the stored login, the key.
struct CloudOptions: ParsableArguments {
  @Option(help: "The save folder.")
  var saves = "Saves"

  @Option(help: "The login file (default: $XDG_CONFIG_HOME/stasis/cloud.json, else ~/.config/stasis/cloud.json).")
  var login: String?

  @OptionGroup var key: KeyFileOption

  /// The store, the login and the sync of `slot` (nil: only the client).
  func open(_ slot: SaveSlot?, configuration: CloudSyncConfiguration = .init()) throws -> (
    store: SaveStore, client: CloudClient, sync: CloudSync?
  ) {
    let path = login ?? LoginFile.path()
    let credentials: LoginFile
    do {
      credentials = try LoginFile.load(from: path)
    } catch {
      Terminal.standardError.line(Terminal.standardError.paint("error: ", .red) + "\(error)")
      throw Exit.invalid
    }
    let store = SaveStore(directory: saves, signing: try key.policy(), device: credentials.device)
    let client = CloudClient(
      credentials: CloudCredentials(url: credentials.server, token: credentials.token, device: credentials.device))
    return (store, client, slot.map { CloudSync(client: client, store: store, slot: $0, configuration: configuration) })
  }
}

/// Prints a cloud failure in one line and returns its exit code: 74 when the server could not
/// be reached, 1 otherwise.
func fail(_ error: CloudError) -> ExitCode {
  Terminal.standardError.line(Terminal.standardError.paint("error: ", .red) + error.description)
  return error.kind == .offline ? Exit.io : Exit.invalid
}

func checkedSlot(_ name: String) throws -> SaveSlot {
  do {
    return try SaveSlot(name)
  } catch {
    throw ValidationError("\(error.message)")
  }
}

extension Cloud {
  struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Store a server and a player's token for the other cloud commands (mode 0600).",
      discussion: """
        The token file holds the line `stasis-server players add NAME` printed. The token is
        checked against the server before it is stored, and never printed.

        Example:
          stasis-server players add alice > alice.token
          stasis cloud login --server http://127.0.0.1:8080 --token-file alice.token --device laptop
        """)

    @Option(help: "The server's URL.")
    var server: String

    @Option(help: "A file holding the bearer token.")
    var tokenFile: String

    @Option(help: "This device's name in the server's history (default: the host name).")
    var device = ProcessInfo.processInfo.hostName

    @Option(
      help: "Where to store the login (default: $XDG_CONFIG_HOME/stasis/cloud.json, else ~/.config/stasis/cloud.json).")
    var login: String?

    func run() async throws {
      let token: String
      do {
        token = try LoginFile.token(fromFile: tokenFile)
      } catch {
        Terminal.standardError.line(Terminal.standardError.paint("error: ", .red) + error.description)
        throw error.isUnreadable ? Exit.io : Exit.invalid
      }
      let client = CloudClient(credentials: CloudCredentials(url: server, token: token, device: device))
      let slots: [RemoteRevision]
      do {
        slots = try await client.slots()
      } catch {
        throw fail(error)
      }
      let path = login ?? LoginFile.path()
      do {
        try LoginFile(server: client.credentials.url, token: token, device: device).save(to: path)
      } catch {
        Terminal.standardError.line(Terminal.standardError.paint("error: ", .red) + "\(error)")
        throw Exit.io
      }
      Terminal.standardOutput.line(
        "logged in to \(client.credentials.url) as device '\(device)' (\(slots.count) slot\(slots.count == 1 ? "" : "s") there); "
          + "stored in \(path), mode 600")
    }
  }

  struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "How each slot stands with the server: synced, ahead, behind or conflict.",
      discussion: """
        ahead: local saves the server does not have (push); behind: the server moved and nothing
        local is unsynced (pull fast-forwards); conflict: both moved past the same base (resolve).

        Example:
          stasis cloud status
          stasis cloud status autosave --json
        """)

    @Argument(help: "One slot (default: every slot, local or on the server).")
    var slot: String?

    @Flag(help: "Print the slots as JSON.")
    var json = false

    @OptionGroup var options: CloudOptions

    func run() async throws {
      let (store, client, _) = try options.open(nil)
      let heads: [RemoteRevision]
      do {
        heads = try await client.slots()
      } catch {
        throw fail(error)
      }
      var names = ((try? store.listSlots()) ?? []).map(\.name)
      for head in heads where !names.contains(head.slot) { names.append(head.slot) }
      if let slot { names = [try checkedSlot(slot).name] }
      var rows: [[String]] = []
      var objects: [[String: Any]] = []
      for name in names.sorted() {
        guard let slot = try? SaveSlot(name) else { continue }
        let record = SyncRecord.load(store: store, slot: slot, server: client.credentials)
        let local = store.newestGeneration(of: slot)
        let head = heads.first { $0.slot == name }
        let state = SyncState.classify(record: record, newestLocal: local, head: head?.revision)
        let waiting = record.queued.count
        rows.append([
          name, Self.paint(state), record.base.map { "r\($0)" } ?? "-", local.map(String.init) ?? "-",
          head.map { "r\($0.revision)" } ?? "-", waiting == 0 ? "" : "\(waiting)",
        ])
        objects.append([
          "slot": name, "state": state.rawValue, "base": record.base ?? NSNull(), "localGeneration": local ?? NSNull(),
          "serverHead": head?.revision ?? NSNull(), "waiting": waiting,
          "conflict": record.conflict.map {
            ["base": $0.base ?? NSNull(), "ours": $0.ours, "theirs": $0.theirs] as [String: Any]
          }
            ?? NSNull(),
        ])
      }
      if json {
        print(jsonText(objects))
      } else if rows.isEmpty {
        Terminal.standardOutput.line("no slots here or on \(client.credentials.url)")
      } else {
        Terminal.standardOutput.table(
          ["slot", "state", "base", "local", "server", "waiting"], rows, rightAligned: [3, 5])
      }
    }

    static func paint(_ state: SyncState) -> String {
      let out = Terminal.standardOutput
      switch state {
      case .synced: return out.paint(state.rawValue, .green)
      case .conflict: return out.paint(state.rawValue, .red)
      default: return out.paint(state.rawValue, .yellow)
      }
    }
  }
}
