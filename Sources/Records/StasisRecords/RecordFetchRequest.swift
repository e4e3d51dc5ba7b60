#if Records
  /// What a ``FetchedResultsController`` shows: which records (a type and a filter), in which
  /// order, and grouped into sections by which column. Modelled on Core Data's `NSFetchRequest`,
  /// on GRDB's query interface.
  ///
  /// Records with equal sort keys are ordered by primary key, so the order is always the same.
  /// Sections appear in the order of their first record: sort by the section key first to have
  /// them in that key's order.
  ///
  /// ```swift
  /// let topTen = RecordFetchRequest(
  ///   HighScore.self, filter: Column("points") > 0, sortedBy: [Column("points").desc], limit: 10)
  /// let byLevel = RecordFetchRequest(
  ///   HighScore.self, sortedBy: [Column("level"), Column("points").desc], sectionKey: "level")
  /// ```
  public struct RecordFetchRequest<Record: FetchableRecord & TableRecord & Sendable>: Sendable {
    /// Which records: an SQL condition on the record's table; nil for all.
    public var filter: SQLExpression?
    /// The order, most significant first; the primary key breaks ties.
    public var sortOrder: [SQLOrdering]
    /// The column whose value names a record's section; nil for one unnamed section.
    public var sectionKey: String?
    /// At most this many records; nil for all.
    public var limit: Int?

    /// Creates a request; the call site says only what differs from "every record, by primary key".
    public init(
      _ type: Record.Type = Record.self,
      filter: (any SQLSpecificExpressible)? = nil,
      sortedBy sortOrder: [any SQLOrderingTerm] = [],
      sectionKey: String? = nil,
      limit: Int? = nil
    ) {
      self.filter = filter?.sqlExpression
      self.sortOrder = sortOrder.map(\.sqlOrdering)
      self.sectionKey = sectionKey
      self.limit = limit
    }

    /// The rows, in order, each with its primary key, content and section, read in `db`.
    func fetch(_ db: Database) throws -> [FetchedRecord<Record>] {
      let primaryKey = try db.primaryKey(Record.databaseTableName)
      var query = Record.all()
      // A table without a declared key is keyed by its hidden rowid: select it too.
      let hiddenRowID = primaryKey.isRowID && primaryKey.rowIDColumn == nil
      if hiddenRowID { query = query.annotated(with: [Column.rowID.forKey("rowid")]) }
      if let filter { query = query.filter(filter) }
      query = query.order(sortOrder + primaryKey.columns.map { Column($0).asc })
      if let limit { query = query.limit(limit) }
      let keyColumns = hiddenRowID ? ["rowid"] : primaryKey.columns
      return try Row.fetchAll(db, query).map { row in
        var section = ""
        if let sectionKey { section = FetchedRecord<Record>.sectionName(row[sectionKey] as DatabaseValue) }
        return FetchedRecord(
          record: try Record(row: row),
          row: DiffedRow(
            identity: keyColumns.map { row[$0] as DatabaseValue }, content: Array(row.databaseValues),
            section: section))
      }
    }
  }

  /// One fetched record, with what the diff compares.
  struct FetchedRecord<Record: Sendable>: Sendable {
    var record: Record
    var row: DiffedRow<[DatabaseValue], [DatabaseValue]>

    /// A section key's value as a section's name: text as it is, numbers in decimal, NULL as "".
    static func sectionName(_ value: DatabaseValue) -> String {
      switch value.storage {
      case .null: ""
      case .int64(let number): String(number)
      case .double(let number): String(number)
      case .string(let text): text
      case .blob(let bytes): bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
      }
    }
  }
#endif
