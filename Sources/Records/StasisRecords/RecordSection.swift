/// One section of a controller's results: the records that share a section key's value.
public struct RecordSection<Record: Sendable>: Sendable {
  /// The section key's value as text (numbers in decimal, NULL as ""); "" without a key.
  public var name: String
  /// The section's records, in the request's order.
  public var records: [Record]

  /// Creates a section.
  public init(name: String, records: [Record]) {
    self.name = name
    self.records = records
  }
}
