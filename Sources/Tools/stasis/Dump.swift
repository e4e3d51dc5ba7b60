import ArgumentParser
import Stasis
import StasisInspect
import StasisMerge

struct Dump: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Print a save's content as JSON with sorted keys, from its own description.",
    discussion: """
      Example:
        stasis dump Saves/autosave/0000000003.stasis
        stasis dump Saves/autosave/0000000003.stasis --section camera
        stasis dump Saves/autosave/0000000003.stasis --key-file game.key
        stasis dump city.stasis --section agents --all-elements > agents.json

      Top-level keys are the sections (a demo save has score, level, camera,
      physics, autopilot; the canvas level's also canvas). Raw sections (a thumbnail) are left out; `inspect`
      lists them.

      A bulk array (an array of plain structs stored as raw bytes) is summarised:
        {"$bulk": {"count": 1000000, "stride": 16,
                   "fields": [{"name": "x", "type": "f32", "offset": 0}, ...],
                   "first": [{"x": 1.5, ...}, ...]}}
      count is the number of elements, stride the bytes of one, fields its
      saved fields (type as the format names it: bool, i8...i64, u8...u64,
      f32, f64), first its first five elements. With --all-elements it is an
      array of every element instead, each an object of its fields, written as
      it goes.

      An entity world (a game's WorldSnapshot) is shown by entity:
        {"$world": {"count": 25, "nextIdentity": 66,
                    "components": {"motion": {"version": 1, "count": 25}, ...},
                    "first": [{"entity": 1, "components": {"motion": {...}}}, ...]}}
      its first five entities, or with --all-elements "entities", every one. A
      reference to another entity is {"$entity": 7}.

      A damaged file (a flipped bit, a truncation) still has its whole
      sections printed; each bad one is {"$damaged": "..."} or {"$missing":
      "..."}, the reason goes to standard error in one line, and the exit code
      is 1.

      With a key, a save whose signature does not match is refused (exit 1),
      and standard error says `signature: valid` or `signature: unsigned`.
      Without one, a signed save's signature is not checked, and standard
      error says `signed: yes (not checked: no key)`.
      """
  )

  @Argument(help: "The save file.")
  var file: String

  @Option(help: "Print only this section.")
  var section: String?

  @Flag(help: "Print every element of bulk arrays, streamed, instead of a summary.")
  var allElements = false

  @OptionGroup var key: KeyFileOption

  private var listing: BulkListing { allElements ? .allElements : .summary }

  func run() throws {
    let signing = try key.policy()
    let opened: (document: SaveDocument, signature: SignatureStatus)
    do {
      opened = try SaveFileFormat.decodeWithSignature(try readSaveFile(file), path: file, signing: signing)
    } catch {
      try dumpWholeSections(after: error)
      throw fail(error)
    }
    let (document, signature) = opened
    let verdict = SignatureVerdict(
      keyGiven: signing.checksSignatures, isSigned: signature != .unsigned, status: signature)
    if verdict.keyGiven || verdict.notCheckedForWantOfKey, let line = verdict.line {
      Terminal.standardError.line(line)
    }
    if let section {
      guard let found = document[section: section] else {
        let names = document.sections.map(\.name).joined(separator: ", ")
        Terminal.standardError.line("error: \(file): no section '\(section)'; the file has: \(names)")
        throw ExitCode.validationFailure
      }
      guard case .tree(let value) = found.content else {
        throw fail(
          SaveFileError(.typeMismatch, "section '\(section)' holds raw bytes, not values", context: .init(file: file)))
      }
      write(value)
    } else {
      write(document.tree)
    }
  }

  private func write(_ value: SaveValue) {
    let json = StreamedJSON(TextOutput(.standardOutput))
    SaveInspection.writeDump(value, listing: listing, to: json)
    json.output.flush()
  }

  /// For a damaged file whose header is whole: prints the sections that survive, marks the
  /// others, and fails with the file's first error (the caller prints it).
  private func dumpWholeSections(after error: SaveFileError) throws {
    guard error.kind == .checksumMismatch || error.kind == .truncated || error.kind == .malformed,
      let bytes = try? readSaveFile(file), let sections = SaveFileFormat.salvage(bytes, path: file),
      sections.contains(where: { if case .whole = $0.state { true } else { false } })
    else { return }
    var fields: [(key: String, write: () -> Void)] = []
    let json = StreamedJSON(TextOutput(.standardOutput))
    for (entry, state) in sections
    where (section == nil || entry.name == section) && !fields.contains(where: { $0.key == entry.name }) {
      switch state {
      case .whole(let found):
        if case .tree(let value) = found.content {
          fields.append((entry.name, { json.value(value, listing: listing) }))
        }
      case .missing(let reason):
        fields.append(
          (entry.name, { json.object([("$missing", { json.string(reason.location + ": " + reason.message) })]) }))
      case .damaged(let reason):
        fields.append(
          (entry.name, { json.object([("$damaged", { json.string(reason.location + ": " + reason.message) })]) }))
      }
    }
    json.object(fields)
    json.finish()
    json.output.flush()
  }
}
