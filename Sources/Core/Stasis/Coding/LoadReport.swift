import Foundation

/// What happened to a save on its way into the current types: the migrations that ran, the
/// fields that took defaults, the fields dropped by declaration, and the sections kept but not
/// decoded. A clean load of a save written by the same schema reports nothing.
///
/// ```swift
/// let loaded = try store.load(codec: codec, slot: "autosave")
/// for line in loaded.report.lines { logger.info("\(line)") }  // "schema 1 → 2: 1 → 2", "defaulted: tank.armor"
/// ```
public struct LoadReport: Sendable, Equatable, Codable {
  /// One migration step that ran (a ``SchemaMigrations/Migration`` is the step's code).
  public struct MigrationStep: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The schema it migrated from.
    public var from: UInt32
    /// The schema it migrated to (`from + 1`).
    public var to: UInt32

    /// Creates a step.
    public init(from: UInt32, to: UInt32) {
      self.from = from
      self.to = to
    }

    /// `1 → 2`.
    public var description: String { "\(from) → \(to)" }
  }

  /// The schema version the save was written with.
  public var storedSchema: UInt32
  /// The schema version it was loaded into.
  public var currentSchema: UInt32
  /// The registered migrations that ran, in order.
  public var migrations: [MigrationStep]

  /// Field paths the save lacked that took their defaults (`camera.zoom`, `bodies[].spin`).
  public var defaultedFields: [String]
  /// Field paths the save had that the types declare removed (``SaveRemovedFields``).
  public var droppedFields: [String]
  /// Raw sections the save carries that the codec does not decode (other than `thumbnail`
  /// and `load-report`):
  /// kept in ``LoadedSave/document``, not in the state.
  public var unknownSections: [String]

  /// Creates a report.
  public init(
    storedSchema: UInt32, currentSchema: UInt32, migrations: [MigrationStep] = [], defaultedFields: [String] = [],
    droppedFields: [String] = [], unknownSections: [String] = []
  ) {
    self.storedSchema = storedSchema
    self.currentSchema = currentSchema
    self.migrations = migrations
    self.defaultedFields = defaultedFields
    self.droppedFields = droppedFields
    self.unknownSections = unknownSections
  }

  /// True when the save loaded as written: same schema, nothing defaulted, dropped or left over.
  public var isClean: Bool {
    storedSchema == currentSchema && migrations.isEmpty && defaultedFields.isEmpty && droppedFields.isEmpty
      && unknownSections.isEmpty
  }

  /// One line per thing that happened, for logs and tools; empty when clean.
  public var lines: [String] {
    var lines: [String] = []
    if storedSchema != currentSchema {
      let steps = migrations.isEmpty ? "no migration registered" : migrations.map(\.description).joined(separator: ", ")
      lines.append("schema \(storedSchema) → \(currentSchema): \(steps)")
    }
    if !defaultedFields.isEmpty { lines.append("defaulted: \(defaultedFields.joined(separator: ", "))") }
    if !droppedFields.isEmpty { lines.append("dropped by declaration: \(droppedFields.joined(separator: ", "))") }
    if !unknownSections.isEmpty { lines.append("unknown sections kept: \(unknownSections.joined(separator: ", "))") }
    return lines
  }

  /// The raw section that carries a report into later saves, so `stasis inspect` shows how a
  /// save's lineage reached its schema without the game's code.
  public static let sectionName = "load-report"

  /// The report as that section's bytes (JSON, sorted keys).
  public var sectionBytes: [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return (try? encoder.encode(self)).map { Array($0) } ?? []
  }

  /// The report in a `load-report` section's bytes, or nil when they are not one.
  public init?(sectionBytes bytes: [UInt8]) {
    guard let report = try? JSONDecoder().decode(LoadReport.self, from: Data(bytes)) else { return nil }
    self = report
  }
}
