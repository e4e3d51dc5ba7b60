import ArgumentParser
import Foundation
import Stasis
@_spi(Plumbing) import StasisCloud

/// The cloud commands on one slot: push, pull, log, resolve, release, discard.
extension Cloud {
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
        if case .uploaded = event { return event.message }
        return nil
      }
      if let error = report.error {
        if error.kind == .conflict {
          Terminal.standardError.line(
            Terminal.standardError.paint("error: ", .red)
              + "conflict: \(error.message); `stasis cloud pull \(slot)`, or `stasis cloud resolve \(slot) --take ours|theirs|merge`"
          )
          throw Exit.invalid
        }
        throw fail(error)
      }
      Terminal.standardOutput.line(
        uploaded.first ?? "nothing to push: \(slot) has no unsynced save")
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
      let events = sync!.status.events.map(\.message)
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
      discussion: """
        Each revision shows its base (the head it was uploaded on, If-Match) and its parent (the
        revision whose state it continues; - for a history of its own, such as a new game). A
        conflict's winner that took its own side whole continues its own base, not the head.

        Example:
          stasis cloud log autosave
        """)

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
        throw fail(CloudError(.notFound, "slot '\(slot)' is not on \(client.credentials.url)"))
      }
      let base = SyncRecord.load(store: store, slot: name, server: client.credentials).base
      if json {
        print(
          jsonText(
            revisions.map {
              [
                "revision": $0.revision, "baseRevision": $0.baseRevision ?? NSNull(), "parent": $0.parent ?? NSNull(),
                "bytes": $0.bytes,
                "sha256": $0.sha256, "uploadedAt": $0.uploadedAt, "device": $0.device, "playTime": $0.playTime,
                "progress": $0.progress ?? NSNull(), "localBase": $0.revision == base, "kept": $0.isKept,
                "keptReason": $0.keptReason ?? NSNull(),
              ] as [String: Any]
            }))
        return
      }
      let rows = revisions.map { revision in
        [
          "r\(revision.revision)", revision.baseRevision.map { "r\($0)" } ?? "-",
          revision.parent.map { "r\($0)" } ?? "-", revision.uploadedAt,
          revision.device, "\(revision.bytes)", String(format: "%.1f s", revision.playTime),
          progressText(revision.progress), String(revision.sha256.prefix(12)),
          [revision.revision == base ? "<- base" : nil, revision.keptReason.map { "kept: \($0)" }].compactMap { $0 }
            .joined(separator: ", "),
        ]
      }
      Terminal.standardOutput.table(
        ["revision", "base", "parent", "uploaded at", "device", "bytes", "play time", "progress", "sha256", ""], rows,
        rightAligned: [5, 6, 7])
    }
  }

  struct Resolve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Settle a slot's conflict: take ours, theirs, or a three-way merge against the base.",
      discussion: """
        The loser is kept: theirs stays in the server's history; ours stays a local generation,
        kept out of pruning until `stasis cloud release`. The result is uploaded on top of theirs.
        A merge takes each section from the side that changed it; sections both sides changed need
        --fallback (whole from its side), or the game's declarations (--declarations FILE, the format
        of `stasis merge`) for the paths inside them.

        Example:
          stasis cloud resolve autosave --take theirs
          stasis cloud resolve autosave --take merge --fallback recent --declarations merge.txt
        """)

    @Argument(help: "The slot.")
    var slot: String

    @Option(help: "ours, theirs or merge.")
    var take: String

    @Option(
      help: "For merge: the policy for sections both sides changed (recent, playtime, progress, last-known-good).")
    var fallback: String?

    @Option(
      help: ArgumentHelp("For merge: the game's merge declarations (see stasis merge --help).", valueName: "file"))
    var declarations: String?

    @OptionGroup var options: CloudOptions

    func validate() throws {
      guard ["ours", "theirs", "merge"].contains(take) else { throw ValidationError("--take is ours, theirs or merge") }
      if declarations != nil, take != "merge" { throw ValidationError("--declarations goes with --take merge") }
      if let fallback {
        guard take == "merge", let policy = ConflictPolicy(name: fallback), policy.name != "merge" else {
          throw ValidationError("--fallback goes with --take merge: recent, playtime, progress or last-known-good")
        }
      }
    }

    func run() async throws {
      let (_, _, sync) = try options.open(
        try checkedSlot(slot), configuration: CloudSyncConfiguration(policy: .manual))
      let report: SyncReport
      switch take {
      case "ours": report = await sync!.resolve(taking: .side(.ours))
      case "theirs": report = await sync!.resolve(taking: .side(.theirs))
      default:
        let rules = try declarations.map(MergeDeclarations.read) ?? MergeRules()
        report = await sync!.resolve(
          with: .merge(rules: rules, fallback: fallback.flatMap { ConflictPolicy(name: $0) } ?? .manual))
      }
      for event in sync!.status.events { Terminal.standardOutput.line(event.message) }
      if let conflict = sync!.status.conflicts.last {
        for field in conflict.fields.prefix(50) { Terminal.standardOutput.line("  \(field)") }
        if conflict.fields.count > 50 { Terminal.standardOutput.line("  … and \(conflict.fields.count - 50) more") }
        for section in conflict.sections where section.source != .unchanged {
          Terminal.standardOutput.line("  section \(section)")
        }
      }
      if let error = report.error { throw fail(error) }
      if report.state == .conflict {
        Terminal.standardError.line(
          Terminal.standardError.paint("error: ", .red)
            + "still in conflict: sections both sides changed need --fallback recent|playtime|progress, or --take ours|theirs"
        )
        throw Exit.invalid
      }
    }
  }

  struct Release: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Let go of a local generation a lost conflict kept: the next save may prune it.",
      discussion: """
        Nothing is deleted now: the generation is only no longer kept, and a later save prunes
        it like any older generation (`stasis discard` deletes at once). A revision the server
        kept is deleted there with `stasis cloud discard SLOT --revision N`.

        Example:
          stasis cloud release autosave 4
        """)

    @Argument(help: "The slot.")
    var slot: String

    @Argument(help: "The kept local generation.")
    var generation: Int

    @OptionGroup var options: CloudOptions

    func run() async throws {
      try releaseKept(generation, slot: slot, saves: options.saves)
    }
  }

  struct Discard: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Delete a revision the server kept after a lost conflict (not the head).",
      discussion: """
        The revision (`kept` in `stasis cloud log`) is deleted from the server at once: its
        bytes stop counting against the player's limit. A local generation a lost conflict
        kept is let go with `stasis cloud release SLOT GENERATION` (`discard SLOT GENERATION`,
        which only released it, still does so in 0.10 with a warning).

        Example:
          stasis cloud discard autosave --revision 2
        """)

    @Argument(help: "The slot.")
    var slot: String

    @Argument(help: "Deprecated: the kept local generation to release (use `stasis cloud release`).")
    var generation: Int?

    @Option(help: "The revision on the server to delete (it must not be the head).")
    var revision: Int?

    @OptionGroup var options: CloudOptions

    func validate() throws {
      guard (generation == nil) != (revision == nil) else {
        throw ValidationError(
          "give --revision N for a revision on the server (a kept generation: stasis cloud release)")
      }
      if let revision, revision < 1 { throw ValidationError("--revision is a positive whole number") }
    }

    func run() async throws {
      let name = try checkedSlot(slot)
      guard let revision else {
        Terminal.standardError.line(
          "warning: 'stasis cloud discard SLOT GENERATION' only releases a kept generation: "
            + "it is 'stasis cloud release \(slot) \(generation!)' now, and goes in 0.11.0")
        try releaseKept(generation!, slot: slot, saves: options.saves)
        return
      }
      let (_, client, _) = try options.open(nil)
      do {
        try await client.discard(slot: name, revision: revision)
      } catch {
        throw fail(error)
      }
      Terminal.standardOutput.line("r\(revision) of \(slot) is discarded from \(client.credentials.url)")
    }
  }
}

/// `stasis cloud release`: a kept local generation is no longer kept (nothing is deleted now).
private func releaseKept(_ generation: Int, slot: String, saves: String) throws {
  let name = try checkedSlot(slot)
  let store = SaveStore(directory: saves)
  guard store.keptGenerations(of: name).contains(where: { $0.generation == generation }) else {
    throw fail(
      SaveFileError(
        .notFound, "slot '\(slot)' keeps no generation \(generation)",
        context: .init(file: store.folder(of: name))))
  }
  do {
    try store.release(generation: generation, slot: name)
  } catch {
    throw fail(error)
  }
  Terminal.standardOutput.line("generation \(generation) of \(slot) is no longer kept: the next save may prune it")
}
