import ArgumentParser
import Foundation
import Stasis

struct Slots: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "List the slots of a save folder and their generations, newest first, from headers only.",
    discussion: """
      Example:
        stasis slots
        stasis slots Saves --json
      """
  )

  @Argument(help: "The save folder.")
  var directory: String = "Saves"

  @Flag(help: "Print the slots as JSON.")
  var json = false

  @Option(help: "The schema version of the build that will read the slots: generations above it are marked kept.")
  var schema: UInt32?

  func run() throws {
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: directory, isDirectory: &isFolder), isFolder.boolValue else {
      throw fail(SaveFileError(.notFound, "no such save folder", context: .init(file: directory)))
    }
    let slots: [SlotInfo]
    do {
      slots = try SaveStore(directory: directory).listSlots()
    } catch {
      throw fail(error)
    }
    if json {
      print(
        jsonText(
          slots.map { slot in
            ["slot": slot.name, "generations": slot.generations.map { generationJSON($0, slot: slot) }]
              as [String: Any]
          }))
      return
    }
    let out = Terminal.standardOutput
    guard !slots.isEmpty else {
      out.line("no slots in \(directory)")
      return
    }
    // One column per field of the games' own summaries, in the order they first appear; one
    // named like a built-in column is `summary.NAME` (``detailColumn(_:)``).
    let headers = slots.flatMap { $0.generations.compactMap(\.header) }
    var detailNames: [String] = []
    for header in headers {
      for field in detailFields(header.summary) where !detailNames.contains(field.name) {
        detailNames.append(field.name)
      }
    }
    let showProgress = headers.contains { $0.summary.progress != nil }
    let showDevice = headers.contains { !$0.summary.device.isEmpty }
    var rows: [[String]] = []
    for slot in slots {
      for info in slot.generations {
        let header = info.header
        let details = header.map(\.summary).map(detailFields) ?? []
        var row = [slot.name, "\(info.generation)", header.map { isoDate(milliseconds: $0.createdAt) } ?? "-"]
        row += detailNames.map { name in details.first { $0.name == name }.map { cellText($0.value) } ?? "-" }
        row.append(header.map { String(format: "%.1f s", $0.summary.playTime) } ?? "-")
        if showProgress { row.append(progressText(header?.summary.progress)) }
        if showDevice { row.append(header.map { $0.summary.device.isEmpty ? "-" : $0.summary.device } ?? "-") }
        row += [
          "\(info.size)", info.isValid ? out.paint("yes", .green) : out.paint("no", .red),
          slot.keptReason(info, readerSchema: schema) ?? info.error.map { $0.kindDescription } ?? "",
        ]
        rows.append(row)
      }
    }
    var columns = ["slot", "generation", "saved at"] + detailNames.map(detailColumn) + ["play time"]
    if showProgress { columns.append("progress") }
    if showDevice { columns.append("device") }
    columns += ["bytes", "valid", "note"]
    if rows.allSatisfy({ $0.last == "" }) {
      columns.removeLast()
      rows = rows.map { Array($0.dropLast()) }
    }
    // Numbers right-aligned: the generation, play time, progress, bytes and numeric summary fields.
    var numeric: Set<Int> = [1]
    for (index, name) in columns.enumerated() where ["play time", "progress", "bytes"].contains(name) {
      numeric.insert(index)
    }
    for index in 3..<(3 + detailNames.count) where rows.allSatisfy({ Double($0[index]) != nil || $0[index] == "-" }) {
      numeric.insert(index)
    }
    out.table(columns, rows, rightAligned: numeric)
  }

  private func generationJSON(_ info: GenerationInfo, slot: SlotInfo) -> [String: Any] {
    var object: [String: Any] = [
      "generation": info.generation, "path": info.path, "bytes": info.size, "valid": info.isValid,
      "thumbnail": info.hasThumbnail,
    ]
    if let kept = slot.keptReason(info, readerSchema: schema) { object["kept"] = kept }
    if let header = info.header {
      object.merge(summaryJSON(header)) { kept, _ in kept }
      object["schema"] = header.game.schemaVersion
    }
    if let error = info.error { object["error"] = error.description }
    return object
  }
}

struct Recover: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Make an older valid generation of a slot the newest, atomically, keeping the others.",
    discussion: """
      Example:
        stasis recover autosave                   # the newest generation that passes every check
        stasis recover autosave --generation 2 --saves Saves

      The chosen generation's bytes are written as a new generation (so a signed save stays
      signed); nothing is deleted. An invalid generation is refused.
      """
  )

  @Argument(help: "The slot.")
  var slot: String

  @Option(help: "The save folder.")
  var saves: String = "Saves"

  @Option(help: "The generation to make the newest (default: the newest valid one).")
  var generation: Int?

  func run() throws {
    let out = Terminal.standardOutput
    do {
      let slot = try SaveSlot(self.slot)
      let existing = try SaveStore(directory: saves).generations(of: slot)
      guard let newest = existing.first else {
        throw SaveFileError(.notFound, "slot '\(slot)' has no saves", context: .init(file: "\(saves)/\(slot)"))
      }
      // Keep every generation there is, plus the new one.
      let store = SaveStore(directory: saves, generationsToKeep: existing.count + 1)
      let chosen: Int
      if let generation {
        guard existing.contains(generation) else {
          throw SaveFileError(
            .noSuchGeneration,
            "slot '\(slot)' has no generation \(generation) (it has \(existing.map(String.init).joined(separator: ", ")))",
            context: .init(file: store.folder(of: slot)))
        }
        chosen = generation
      } else {
        var firstValid: Int?
        for candidate in existing
        where (try? store.readDocument(at: store.path(of: slot, generation: candidate))) != nil {
          firstValid = candidate
          break
        }
        guard let firstValid else {
          throw SaveFileError(
            .malformed, "no generation of slot '\(slot)' is valid", context: .init(file: store.folder(of: slot)))
        }
        if firstValid == newest {
          out.line("generation \(newest) is the newest and valid: nothing to recover")
          return
        }
        chosen = firstValid
      }
      let bytes = try store.readBytes(at: store.path(of: slot, generation: chosen))
      _ = try store.readDocument(at: store.path(of: slot, generation: chosen))  // refuse an invalid one, naming why
      let handle = store.save(fileBytes: bytes, slot: slot, unreadableNewest: .saveAlongside)
      handle.waitUntilEnded()  // the pruning too: the tool exits next
      let receipt = try handle.wait()
      out.line("generation \(chosen) is now the newest, as generation \(receipt.generation) (\(receipt.path))")
    } catch let error as SaveFileError {
      throw fail(error)
    }
  }
}
