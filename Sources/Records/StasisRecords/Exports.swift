// A game declares its record types with GRDB's protocols (`FetchableRecord`, `PersistableRecord`,
// `Codable`) and writes with its query interface: `import StasisRecords` brings GRDB with it.
#if Records
  @_exported import GRDB
#endif
