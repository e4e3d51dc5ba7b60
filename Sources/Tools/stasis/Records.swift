import ArgumentParser
import Foundation
import Stasis

#if Records
  import StasisRecords
#endif

/// `stasis records`: the tables of a game's structured store (`records.sqlite` in the save
/// folder) and their rows, without the game's code.
struct Records: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "List the tables of a save folder's structured store (records.sqlite) and their rows.",
    discussion: """
      Example:
        stasis records
        stasis records --saves Saves --json

      The store is read, never written. Rows are in primary-key order; a blob is shown by its
      size (its bytes as base64 in --json). Built without the Records trait, this says so.
      """
  )

  @Option(help: "The save folder.")
  var saves: String = "Saves"

  @Flag(help: "Print the tables and their rows as JSON.")
  var json = false

  func run() throws {
    #if Records
      let path = (saves as NSString).appendingPathComponent(RecordStore.fileName)
      guard FileManager.default.fileExists(atPath: path) else {
        throw fail(
          SaveFileError(
            .notFound, "no structured store (\(RecordStore.fileName)) in the save folder", context: .init(file: saves)))
      }
      let tables: [RecordTable]
      let migrations: [String]
      do {
        (tables, migrations) = try RecordTable.read(path)
      } catch {
        Terminal.standardError.line(
          Terminal.standardError.paint("error: ", .red) + "\(path): the records database could not be read (\(error))")
        throw Exit.invalid
      }
      if json {
        print(
          jsonText([
            "path": path, "migrations": migrations,
            "tables": tables.map { ["name": $0.name, "columns": $0.columns, "rows": $0.rows.map { $0.map(\.json) }] },
          ]))
        return
      }
      let out = Terminal.standardOutput
      out.line(
        "\(path): \(tables.count) table\(tables.count == 1 ? "" : "s"), migrations: \(migrations.isEmpty ? "none" : migrations.joined(separator: ", "))"
      )
      for table in tables {
        out.line("")
        out.line(out.paint(table.name, .bold) + " (\(table.rows.count) row\(table.rows.count == 1 ? "" : "s"))")
        guard !table.rows.isEmpty else { continue }
        var numeric: Set<Int> = []
        for column in table.columns.indices where table.rows.allSatisfy({ $0[column].isNumber }) {
          numeric.insert(column)
        }
        out.table(table.columns, table.rows.map { $0.map(\.text) }, rightAligned: numeric)
      }
    #else
      Terminal.standardError.line(
        Terminal.standardError.paint("error: ", .red)
          + "this stasis was built without the Records trait: rebuild with it (it is on by default) to read records.sqlite"
      )
      throw Exit.invalid
    #endif
  }
}

#if Records
  /// One table of the store, read whole: its columns in declaration order and its rows in
  /// primary-key order.
  struct RecordTable {
    var name: String
    var columns: [String]
    var rows: [[DatabaseValue]]

    /// Every table but SQLite's own and the migrations' record, by name; and the migrations
    /// applied, in the order they ran.
    static func read(_ path: String) throws -> (tables: [RecordTable], migrations: [String]) {
      var configuration = Configuration()
      configuration.readonly = true
      let database = try DatabaseQueue(path: path, configuration: configuration)
      return try database.read { db in
        let names = try String.fetchAll(
          db,
          sql: """
            SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
            AND name <> 'grdb_migrations' ORDER BY name
            """)
        let migrations =
          try db.tableExists("grdb_migrations")
          ? String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid") : []
        let tables = try names.map { name in
          let columns = try db.columns(in: name).map(\.name)
          let key = try db.primaryKey(name).columns.map(\.quotedDatabaseIdentifier).joined(separator: ", ")
          let rows = try Row.fetchAll(
            db,
            sql:
              "SELECT \(columns.map(\.quotedDatabaseIdentifier).joined(separator: ", ")) FROM \(name.quotedDatabaseIdentifier) ORDER BY \(key)"
          ).map { Array($0.databaseValues) }
          return RecordTable(name: name, columns: columns, rows: rows)
        }
        return (tables, migrations)
      }
    }
  }

  extension DatabaseValue {
    /// A cell: numbers and text as they are, NULL as `NULL`, a blob by its size.
    fileprivate var text: String {
      switch storage {
      case .null: "NULL"
      case .int64(let number): String(number)
      case .double(let number): String(number)
      case .string(let text): text
      case .blob(let bytes): "<\(bytes.count) bytes>"
      }
    }

    fileprivate var isNumber: Bool {
      switch storage {
      case .int64, .double, .null: true
      default: false
      }
    }

    /// The value in JSON: numbers, text, null, a blob as base64.
    fileprivate var json: Any {
      switch storage {
      case .null: NSNull()
      case .int64(let number): number
      case .double(let number): number
      case .string(let text): text
      case .blob(let bytes): bytes.base64EncodedString()
      }
    }
  }
#endif
