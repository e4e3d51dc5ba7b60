import Foundation
import Stasis

#if canImport(Glibc)
  import Glibc
#endif

/// The figures for one body count, in milliseconds (medians) and bytes.
struct Row: Codable {
  var bodies: Int
  var rawBytes: Int
  var fileBytes: Int
  var memcpyMs: Double
  var memcpyIntoNewArrayMs: Double
  var crc32cMs: Double
  var encodeMs: Double
  var decodeMs: Double
  var rawWriteFsyncRenameMs: Double
  /// Until the save is durable: what its caller waits for.
  var durableSaveMs: Double
  /// Until the slot's writer has also pruned the oldest generation: the writer's whole turn.
  var durableSavePrunedMs: Double
  var loadMs: Double
  var jsonEncodeMs: Double?
  var jsonDecodeMs: Double?
  var jsonBytes: Int?
  var plistEncodeMs: Double?
  var plistDecodeMs: Double?
  var ratios: Ratios
}

struct Ratios: Codable {
  /// Our encode (checksums included) over memcpy of the body bytes. Target ≤ 4.
  var encodeVsMemcpy: Double
  /// Our decode (checks included) over memcpy into an existing buffer. Target ≤ 4.
  var decodeVsMemcpy: Double
  /// Our decode over a copy into a new array (decoding must allocate the array it returns).
  var decodeVsMemcpyIntoNewArray: Double
  /// Durable save over raw write+fsync+rename of the same bytes. Target ≤ 1.25.
  var durableSaveVsRawWrite: Double
  /// The writer's whole turn (durable, then the oldest generation pruned) over the raw write.
  var durablePrunedVsRawWrite: Double
  /// File size over raw body bytes. Target ≤ 1.1.
  var fileSizeVsRaw: Double
  /// JSONEncoder over our encode.
  var jsonEncodeVsOurs: Double?
  /// JSONDecoder over our decode.
  var jsonDecodeVsOurs: Double?
  /// JSON size over raw body bytes.
  var jsonSizeVsRaw: Double?
}

struct Report: Codable {
  var machine: Machine
  var crc32cHardware: Bool
  var rows: [Row]
  var game: GameReport?
}

/// A benchmark that could not run its set-up.
struct BenchError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

struct Machine: Codable {
  var cpu: String
  var cores: Int
  var kernel: String

  static var current: Machine {
    let cpuInfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
    let model = cpuInfo.split(separator: "\n").first { $0.hasPrefix("model name") }
      .map { String($0.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespaces) }
    var name = utsname()
    uname(&name)
    let release = withUnsafeBytes(of: name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    return Machine(
      cpu: model ?? "unknown", cores: ProcessInfo.processInfo.activeProcessorCount, kernel: "Linux \(release)")
  }
}

/// The median wall time of `body` over `runs` runs, in milliseconds, after one warm-up.
func median(runs: Int, _ body: () throws -> Void) rethrows -> Double {
  try body()
  let clock = SystemClock()
  var times: [Double] = []
  for _ in 0..<runs {
    let start = clock.now()
    try body()
    times.append((clock.now() - start).inMilliseconds)
  }
  times.sort()
  return times[times.count / 2]
}

/// The medians of `first` and `second`, run by turns (`first`, `second`, `first`, …) so that
/// a machine that slows for a while slows both: the ratio of two medians measured apart moved
/// by 0.7× to 1.4× between runs on a shared disk.
///
/// `settle` runs after each turn of `second`, untimed: what the measured work left running (a
/// save's pruning, which its caller does not wait for) ends before the next turn starts, so it
/// never slows the other side's turn.
func medians(runs: Int, _ first: () -> Void, _ second: () -> Void, settle: () -> Void = {}) -> (Double, Double) {
  first()
  second()
  settle()
  let clock = SystemClock()
  var firstTimes: [Double] = []
  var secondTimes: [Double] = []
  for _ in 0..<runs {
    var start = clock.now()
    first()
    firstTimes.append((clock.now() - start).inMilliseconds)
    start = clock.now()
    second()
    secondTimes.append((clock.now() - start).inMilliseconds)
    settle()
  }
  firstTimes.sort()
  secondTimes.sort()
  return (firstTimes[runs / 2], secondTimes[runs / 2])
}

/// A game's own summary, as a real game's header carries one.
struct BenchSummary: Codable {
  var level: Int
  var score: Int64
}

/// Keeps a value alive and unknown to the optimiser.
@inline(never) func consume<T>(_ value: T) { withExtendedLifetime(value) {} }

extension StasisBench {
  func measure(_ count: Int, folder: String) throws -> Row {
    let state = BenchState(bodies: count)
    let runs = count >= 1_000_000 ? 3 : count >= 100_000 ? 7 : count >= 10_000 ? 21 : 51
    let game = GameIdentity(name: "stasis-bench", build: "1", schemaVersion: 1)
    let codec = SaveCodec<BenchState>(game: game)
    let summary = try SaveSummary(BenchSummary(level: 3, score: 1234), frame: 3600, playTime: 60, progress: 0.5)
    let rawBytes = count * MemoryLayout<BenchBody>.stride

    // memcpy of the body array: the floor for any encoder.
    var destination = [UInt8](repeating: 0, count: rawBytes)
    let memcpyMs = median(runs: runs) {
      state.physics.bodies.withUnsafeBytes { source in
        destination.withUnsafeMutableBytes { $0.copyMemory(from: source) }
      }
      consume(destination)
    }

    // A new array each time: what a snapshot copy or a decoded array costs in Swift.
    let freshCopyMs = median(runs: runs) {
      consume(state.physics.bodies.withUnsafeBytes { [UInt8]($0) })
    }

    let checksumMs = median(runs: runs) {
      consume(state.physics.bodies.withUnsafeBytes { CRC32C.checksum($0) })
    }

    // Encoding reuses its buffer between runs, as the store does between saves.
    var file: [UInt8] = []
    let encodeMs = try median(runs: runs) {
      SaveFileFormat.encode(try codec.document(for: state, summary: summary, createdAt: 0), into: &file)
    }
    let decodeMs = try median(runs: runs) {
      consume(try codec.state(from: try SaveFileFormat.decode(file)))
    }

    // The same bytes written raw: create, write, fsync, rename, fsync the folder.
    let rawPath = "\(folder)/raw.bin"
    let rawWrite = {
      let temporary = rawPath + ".tmp"
      let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
      file.withUnsafeBytes { raw in
        var done = 0
        while done < raw.count { done += write(descriptor, raw.baseAddress! + done, raw.count - done) }
      }
      fsync(descriptor)
      close(descriptor)
      rename(temporary, rawPath)
      let directory = open(folder, O_RDONLY | O_DIRECTORY)
      fsync(directory)
      close(directory)
    }

    let store = SaveStore(directory: folder, generationsToKeep: 2)
    let slot = try SaveSlot("bench-\(count)")
    // Each run saves a state the slot does not hold yet: a save of an unchanged state writes nothing.
    var next = state
    let durableSave = {
      next.score.points += 1
      _ = store.save(next, codec: codec, slot: slot, summary: summary).waitForResult()
    }
    // Run by turns, raw then ours: a disk whose fsync slows for a while slows both sides.
    // The caller waits until the save is durable; the oldest generation is pruned after that, on
    // the slot's worker. Waited for here, untimed, so it never overlaps the raw side's turn.
    let idle = { while store.heldSnapshots(of: slot) > 0 { sched_yield() } }
    let (rawMs, durableMs) = medians(runs: runs, rawWrite, durableSave, settle: idle)
    let (rawAgainMs, prunedMs) = medians(runs: runs, rawWrite) {
      durableSave()
      idle()
    }
    let loadMs = try median(runs: runs) {
      consume(try store.load(codec: codec, slot: slot))
    }

    var row = Row(
      bodies: count, rawBytes: rawBytes, fileBytes: file.count, memcpyMs: memcpyMs, memcpyIntoNewArrayMs: freshCopyMs,
      crc32cMs: checksumMs,
      encodeMs: encodeMs,
      decodeMs: decodeMs, rawWriteFsyncRenameMs: rawMs, durableSaveMs: durableMs, durableSavePrunedMs: prunedMs,
      loadMs: loadMs,
      ratios: Ratios(
        encodeVsMemcpy: encodeMs / memcpyMs, decodeVsMemcpy: decodeMs / memcpyMs,
        decodeVsMemcpyIntoNewArray: decodeMs / freshCopyMs,
        durableSaveVsRawWrite: durableMs / rawMs, durablePrunedVsRawWrite: prunedMs / rawAgainMs,
        fileSizeVsRaw: Double(file.count) / Double(rawBytes)))

    if count <= foundationUpTo {
      let foundationRuns = max(1, min(runs, 5))
      var jsonData = Data()
      row.jsonEncodeMs = try median(runs: foundationRuns) { jsonData = try JSONEncoder().encode(state.physics) }
      row.jsonDecodeMs = try median(runs: foundationRuns) {
        consume(try JSONDecoder().decode(BenchPhysics.self, from: jsonData))
      }
      row.jsonBytes = jsonData.count
      let plist = PropertyListEncoder()
      plist.outputFormat = .binary
      var plistData = Data()
      row.plistEncodeMs = try median(runs: foundationRuns) { plistData = try plist.encode(state.physics) }
      row.plistDecodeMs = try median(runs: foundationRuns) {
        consume(try PropertyListDecoder().decode(BenchPhysics.self, from: plistData))
      }
      row.ratios.jsonEncodeVsOurs = row.jsonEncodeMs! / encodeMs
      row.ratios.jsonDecodeVsOurs = row.jsonDecodeMs! / decodeMs
      row.ratios.jsonSizeVsRaw = Double(jsonData.count) / Double(rawBytes)
    }
    return row
  }

  func printTable(_ rows: [Row]) {
    func ms(_ value: Double?) -> String { value.map { String(format: "%.3f", $0) } ?? "-" }
    func ratio(_ value: Double?) -> String { value.map { String(format: "%.2f×", $0) } ?? "-" }
    let machine = Machine.current
    print(
      "machine: \(machine.cpu), \(machine.cores) cores, \(machine.kernel); CRC32C hardware: \(CRC32C.isHardwareAccelerated)"
    )
    print("times are medians in ms")
    print("")
    print(
      "| bodies | memcpy | copy to new array | CRC32C | encode | decode | write+fsync+rename | durable save | durable, pruned | load | JSON enc | JSON dec | plist enc | plist dec |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows {
      print(
        "| \(row.bodies) | \(ms(row.memcpyMs)) | \(ms(row.memcpyIntoNewArrayMs)) | \(ms(row.crc32cMs)) | \(ms(row.encodeMs)) | \(ms(row.decodeMs)) | \(ms(row.rawWriteFsyncRenameMs)) | \(ms(row.durableSaveMs)) | \(ms(row.durableSavePrunedMs)) | \(ms(row.loadMs)) | \(ms(row.jsonEncodeMs)) | \(ms(row.jsonDecodeMs)) | \(ms(row.plistEncodeMs)) | \(ms(row.plistDecodeMs)) |"
      )
    }
    print("")
    print(
      "| bodies | encode/memcpy (≤4) | decode/memcpy (≤4) | decode/copy to new array | durable/raw write (≤1.25) | durable, pruned/raw | size/raw (≤1.1) | JSON enc/ours | JSON dec/ours | JSON size/raw |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows {
      let r = row.ratios
      print(
        "| \(row.bodies) | \(ratio(r.encodeVsMemcpy)) | \(ratio(r.decodeVsMemcpy)) | \(ratio(r.decodeVsMemcpyIntoNewArray)) | \(ratio(r.durableSaveVsRawWrite)) | \(ratio(r.durablePrunedVsRawWrite)) | \(ratio(r.fileSizeVsRaw)) | \(ratio(r.jsonEncodeVsOurs)) | \(ratio(r.jsonDecodeVsOurs)) | \(ratio(r.jsonSizeVsRaw)) |"
      )
    }
  }
}
