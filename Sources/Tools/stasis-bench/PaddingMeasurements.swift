import Foundation
import Stasis

#if canImport(Glibc)
  import Glibc
#endif

/// A body Swift pads: 17 bytes of fields, stride 24. Its arrays are packed field by field.
struct PaddedRock: BulkStorable {
  var x: Double = 0
  var y: Double = 0
  var dead: UInt8 = 0
  static let bulkLayout = BulkLayout(of: PaddedRock.self, [.field("x", \.x), .field("y", \.y), .field("dead", \.dead)])
}

/// The same fields with `dead` widened until they tile the stride, as a game did before Stasis
/// packed bulk arrays: one copy, and 7 more bytes an element on disk.
struct WideRock: BulkStorable {
  var x: Double = 0
  var y: Double = 0
  var dead: UInt64 = 0
  static let bulkLayout = BulkLayout(of: WideRock.self, [.field("x", \.x), .field("y", \.y), .field("dead", \.dead)])
}

struct RockField<Rock: BulkStorable>: Codable, Sendable {
  var wave = 0
  var rocks: [Rock]
}

extension StasisBench {
  /// A padded 100,000-element array's encode and durable save against `memcpy` of its memory,
  /// `write`+`fsync` of its file, and the padding-free array of the same fields.
  func measurePadding(count: Int, folder: String) throws {
    let runs = 41
    var padded = RockField(rocks: [PaddedRock](repeating: PaddedRock(), count: count))
    var wide = RockField(rocks: [WideRock](repeating: WideRock(), count: count))
    for index in 0..<count {
      padded.rocks[index] = PaddedRock(x: Double(index), y: Double(index) * 0.5, dead: UInt8(index % 2))
      wide.rocks[index] = WideRock(x: Double(index), y: Double(index) * 0.5, dead: UInt64(index % 2))
    }
    let game = GameIdentity(name: "stasis-bench", build: "1", schemaVersion: 1)
    let paddedCodec = SaveCodec<RockField<PaddedRock>>(game: game)
    let wideCodec = SaveCodec<RockField<WideRock>>(game: game)

    var destination = [UInt8](repeating: 0, count: count * MemoryLayout<PaddedRock>.stride)
    let memcpyMs = median(runs: runs) {
      padded.rocks.withUnsafeBytes { source in destination.withUnsafeMutableBytes { $0.copyMemory(from: source) } }
      consume(destination)
    }
    var paddedFile: [UInt8] = []
    var wideFile: [UInt8] = []
    let paddedEncodeMs = try median(runs: runs) {
      SaveFileFormat.encode(
        try paddedCodec.document(for: padded, summary: SaveSummary(), createdAt: 0), into: &paddedFile)
    }
    let wideEncodeMs = try median(runs: runs) {
      SaveFileFormat.encode(try wideCodec.document(for: wide, summary: SaveSummary(), createdAt: 0), into: &wideFile)
    }

    let rawPath = "\(folder)/padding-raw.bin"
    let rawWrite = {
      let descriptor = open(rawPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
      paddedFile.withUnsafeBytes { raw in
        var done = 0
        while done < raw.count { done += write(descriptor, raw.baseAddress! + done, raw.count - done) }
      }
      fsync(descriptor)
      close(descriptor)
    }
    // Enough generations kept that no save prunes: nothing runs on after a save is durable.
    let store = SaveStore(directory: folder, generationsToKeep: 4 * runs)
    let paddedSlot = try SaveSlot("padded-\(count)")
    let wideSlot = try SaveSlot("wide-\(count)")
    // Each save holds a state the slot does not have yet, or it would write nothing.
    let (paddedSaveMs, wideSaveMs) = medians(
      runs: runs,
      {
        padded.wave += 1
        _ = store.save(padded, codec: paddedCodec, slot: paddedSlot).waitForResult()
      },
      {
        wide.wave += 1
        _ = store.save(wide, codec: wideCodec, slot: wideSlot).waitForResult()
      })
    let (rawMs, _) = medians(runs: runs, rawWrite) {}

    func ms(_ value: Double) -> String { String(format: "%.3f ms", value) }
    func ratio(_ a: Double, _ b: Double) -> String { String(format: "%.2f×", a / b) }
    print(
      "| \(count) rocks (medians) | padded (17 of 24 bytes) | padding-free (24 of 24) | padded ÷ padding-free | target |"
    )
    print("| --- | ---: | ---: | ---: | ---: |")
    print(
      "| file | \(paddedFile.count) bytes | \(wideFile.count) bytes | \(ratio(Double(paddedFile.count), Double(wideFile.count))) | |"
    )
    print(
      "| encode | \(ms(paddedEncodeMs)): \(ratio(paddedEncodeMs, memcpyMs)) a `memcpy` of its memory (\(ms(memcpyMs))) | \(ms(wideEncodeMs)): \(ratio(wideEncodeMs, memcpyMs)) | \(ratio(paddedEncodeMs, wideEncodeMs)) | |"
    )
    print(
      "| durable save | \(ms(paddedSaveMs)): \(ratio(paddedSaveMs, rawMs)) a raw `write`+`fsync` of its file (\(ms(rawMs))) | \(ms(wideSaveMs)) | \(ratio(paddedSaveMs, wideSaveMs)) | ≤ 1.1× |"
    )
  }
}
