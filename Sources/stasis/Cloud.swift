import ArgumentParser
import Foundation
import Stasis
import StasisCloud

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
    subcommands: [Login.self, Status.self, Push.self, Pull.self, Log.self, Resolve.self, Discard.self]
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
    let path = login ?? CloudLogin.path()
    let credentials: CloudLogin
    do {
      credentials = try CloudLogin.load(from: path)
    } catch {
      Terminal.standardError.line(Terminal.standardError.paint("error: ", .red) + "\(error)")
      throw Exit.invalid
    }
    let store = SaveStore(directory: saves, signing: try key.policy(), device: credentials.device)
    let client = CloudClient(
      server: CloudServer(url: credentials.server, token: credentials.token, device: credentials.device))
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
      guard let data = FileManager.default.contents(atPath: tokenFile) else {
        Terminal.standardError.line(
          Terminal.standardError.paint("error: ", .red) + "\(tokenFile): the token file could not be read")
        throw Exit.io
      }
      let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
      guard !token.isEmpty, !token.contains(where: \.isWhitespace) else {
        throw ValidationError("\(tokenFile) does not hold a token (one line, no spaces)")
      }
      let client = CloudClient(server: CloudServer(url: server, token: token, device: device))
      let slots: [RemoteRevision]
      do {
        slots = try await client.slots()
      } catch {
        throw fail(error)
      }
      let path = login ?? CloudLogin.path()
      do {
        try CloudLogin(server: client.server.url, token: token, device: device).save(to: path)
      } catch {
        Terminal.standardError.line(Terminal.standardError.paint("error: ", .red) + "\(error)")
        throw Exit.io
      }
      Terminal.standardOutput.line(
        "logged in to \(client.server.url) as device '\(device)' (\(slots.count) slot\(slots.count == 1 ? "" : "s") there); "
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
        let record = SyncRecord.load(store: store, slot: slot, server: client.server.url)
        let local = (try? store.generations(of: slot).first) ?? nil
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
        Terminal.standardOutput.line("no slots here or on \(client.server.url)")
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

  struct Push: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Upload a slot's newest local save on its base (If-Match); a conflict is refused, never forced.",
      discussion: "Example:\n  stasis cloud push autosave")

    @Argument(help: "The slot.")
    var slot: String

    @OptionGroup var options: CloudOptions

    func run() async throws {
      let (_, _, sync) = try options.open(try checkedSlot(slot))
      let report = await sync!.push()
      let uploaded = sync!.status.events.compactMap { event -> String? in
        if case .uploaded = event { return event.description }
        return nil
      }
      if let error = report.error {
        if error.kind == .conflict {
          Terminal.standardError.line(
            Terminal.standardError.paint("error: ", .red)
              + "conflict: the server moved past this slot's base (\(error.message)); `stasis cloud pull \(slot)` or `stasis cloud resolve \(slot) --take ours|theirs|merge`"
          )
          throw Exit.invalid
        }
        throw fail(error)
      }
      Terminal.standardOutput.line(
        uploaded.first.map { String($0.dropFirst(7)) } ?? "nothing to push: \(slot) has no unsynced save")
    }
  }

  struct Pull: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Fast-forward a slot to the server's head when nothing local is unsynced; report a conflict otherwise.",
      discussion: """
        The download is verified (every checksum, the signature with --key-file, the header) before
        it becomes the slot's next generation; a conflict is left for `stasis cloud resolve`.

        Example:
          stasis cloud pull autosave
        """)

    @Argument(help: "The slot.")
    var slot: String

    @OptionGroup var options: CloudOptions

    func run() async throws {
      let (_, _, sync) = try options.open(try checkedSlot(slot), configuration: .init(policy: .manual))
      let report = await sync!.pull()
      let events = sync!.status.events.map { String($0.description.dropFirst(7)) }
      if let error = report.error {
        for event in events { Terminal.standardOutput.line(event) }
        throw fail(error)
      }
      switch report.state {
      case .conflict?:
        for event in events { Terminal.standardOutput.line(event) }
        Terminal.standardError.line(
          Terminal.standardError.paint("error: ", .red)
            + "slot '\(slot)' is in conflict: `stasis cloud resolve \(slot) --take ours|theirs|merge`")
        throw Exit.invalid
      case .ahead?:
        Terminal.standardOutput.line("\(slot) is ahead of the server: `stasis cloud push \(slot)`")
      default:
        Terminal.standardOutput.line(events.last ?? "\(slot) is up to date")
      }
    }
  }

  struct Log: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "A slot's revision history on the server, newest first.",
      discussion: "Example:\n  stasis cloud log autosave")

    @Argument(help: "The slot.")
    var slot: String

    @Flag(help: "Print the revisions as JSON.")
    var json = false

    @OptionGroup var options: CloudOptions

    func run() async throws {
      let name = try checkedSlot(slot)
      let (store, client, _) = try options.open(nil)
      let revisions: [RemoteRevision]?
      do {
        revisions = try await client.revisions(slot: name)
      } catch {
        throw fail(error)
      }
      guard let revisions else {
        throw fail(CloudError(.notFound, "slot '\(slot)' is not on \(client.server.url)"))
      }
      let base = SyncRecord.load(store: store, slot: name, server: client.server.url).base
      if json {
        print(
          jsonText(
            revisions.map {
              [
                "revision": $0.revision, "baseRevision": $0.baseRevision ?? NSNull(), "bytes": $0.bytes,
                "sha256": $0.sha256, "uploadedAt": $0.uploadedAt, "device": $0.device, "playTime": $0.playTime,
                "progress": $0.progress ?? NSNull(), "localBase": $0.revision == base,
              ] as [String: Any]
            }))
        return
      }
      let rows = revisions.map { revision in
        [
          "r\(revision.revision)", revision.baseRevision.map { "r\($0)" } ?? "-", revision.uploadedAt,
          revision.device, "\(revision.bytes)", String(format: "%.1f s", revision.playTime),
          progressText(revision.progress), String(revision.sha256.prefix(12)),
          revision.revision == base ? "<- base" : "",
        ]
      }
      Terminal.standardOutput.table(
        ["revision", "base", "uploaded at", "device", "bytes", "play time", "progress", "sha256", ""], rows,
        rightAligned: [4, 5, 6])
    }
  }

  struct Resolve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Settle a slot's conflict: take ours, theirs, or a three-way merge against the base.",
      discussion: """
        The loser is kept: theirs stays in the server's history; ours stays a local generation,
        kept out of pruning until `stasis cloud discard`. The result is uploaded on top of theirs.
        A merge whose fields both sides changed needs --fallback to settle them.

        Example:
          stasis cloud resolve autosave --take theirs
          stasis cloud resolve autosave --take merge --fallback recent
        """)

    @Argument(help: "The slot.")
    var slot: String

    @Option(help: "ours, theirs or merge.")
    var take: String

    @Option(help: "For merge: the policy for fields both sides changed (recent, playtime, progress, last-known-good).")
    var fallback: String?

    @OptionGroup var options: CloudOptions

    func validate() throws {
      guard ["ours", "theirs", "merge"].contains(take) else { throw ValidationError("--take is ours, theirs or merge") }
      if let fallback {
        guard take == "merge", let policy = ConflictPolicy(name: fallback), policy.name != "merge" else {
          throw ValidationError("--fallback goes with --take merge: recent, playtime, progress or last-known-good")
        }
      }
    }

    func run() async throws {
      let taken: ConflictDecision? = take == "ours" ? .ours : take == "theirs" ? .theirs : nil
      let configuration = CloudSyncConfiguration(policy: .manual, onConflict: { _ in taken })
      let (_, _, sync) = try options.open(try checkedSlot(slot), configuration: configuration)
      let policy: ConflictPolicy =
        take == "merge"
        ? .merge(rules: MergeRules(), fallback: fallback.flatMap { ConflictPolicy(name: $0) } ?? .manual)
        : .manual
      let report = await sync!.resolve(with: policy, named: take == "merge" ? "merge" : "take \(take)")
      for event in sync!.status.events { Terminal.standardOutput.line(String(event.description.dropFirst(7))) }
      if let conflict = sync!.status.conflicts.last {
        for field in conflict.fields.prefix(50) { Terminal.standardOutput.line("  \(field)") }
        if conflict.fields.count > 50 { Terminal.standardOutput.line("  … and \(conflict.fields.count - 50) more") }
      }
      if let error = report.error { throw fail(error) }
      if report.state == .conflict {
        Terminal.standardError.line(
          Terminal.standardError.paint("error: ", .red)
            + "still in conflict: fields both sides changed need --fallback recent|playtime|progress, or --take ours|theirs"
        )
        throw Exit.invalid
      }
    }
  }

  struct Discard: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Let a generation kept after a lost conflict be pruned again.",
      discussion: "Example:\n  stasis cloud discard autosave 4")

    @Argument(help: "The slot.")
    var slot: String

    @Argument(help: "The kept generation.")
    var generation: Int

    @Option(help: "The save folder.")
    var saves = "Saves"

    func run() async throws {
      let name = try checkedSlot(slot)
      let store = SaveStore(directory: saves)
      guard store.keptGenerations(of: name).contains(where: { $0.generation == generation }) else {
        throw fail(
          SaveFileError(
            .notFound, "slot '\(slot)' keeps no generation \(generation)", context: .init(file: store.folder(of: name)))
        )
      }
      do {
        try store.release(generation: generation, slot: name)
      } catch {
        throw fail(error)
      }
      Terminal.standardOutput.line("generation \(generation) of \(slot) is no longer kept: the next save may prune it")
    }
  }
}
